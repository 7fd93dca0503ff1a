// Package checkout finds the root of the App Operator checkout that a test or a development
// tool runs in.
package checkout

import (
	"fmt"
	"os"
	"path/filepath"
)

// marker is the file at the root of the checkout: the project's PROJECT file.
const marker = "PROJECT"

// Root is the nearest directory, from the working directory up, that holds marker. Go runs a
// test in its package's directory and the Makefile runs its tools in the root, so both find
// the root wherever the checkout is, and whether or not their source paths were trimmed from
// the binary (go build -trimpath).
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return from(wd)
}

// from is Root, starting from dir instead of the working directory.
func from(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s file in %s or any directory above it: run from within the App Operator checkout", marker, dir)
		}
	}
}

// MustRoot is Root for package-level variables of tests and tools, which cannot run outside a
// checkout; it panics with Root's error.
func MustRoot() string {
	root, err := Root()
	if err != nil {
		panic(err)
	}
	return root
}
