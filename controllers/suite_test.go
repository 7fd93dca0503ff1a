package controllers_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/mycompany/app-operator/test/envtest"
)

// env runs the operator against a real API server for every test in this package.
var env *envtest.Environment

func TestMain(m *testing.M) {
	var err error
	if env, err = envtest.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
