package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one file of a layer.
type File struct {
	// Path is the file's path in the image, such as etc/passwd (no leading slash).
	Path string
	// Mode holds the permission bits; zero means 0644.
	Mode os.FileMode
	// UID and GID own the file; zero is root.
	UID, GID int
	// Data is the file's content.
	Data []byte
}

// Dir is a directory of a layer that no file creates, such as tmp (mode 1777).
type Dir struct {
	Path     string
	Mode     os.FileMode
	UID, GID int
}

// Layer makes a reproducible layer: its entries in path order, parent directories first, every
// time set to mtime, owners and modes as given, no user or group names. The same files give the
// same digest on any machine.
func Layer(mtime time.Time, files []File, dirs ...Dir) (v1.Layer, error) {
	return layerOf(types.OCILayer, mtime, files, dirs...)
}

// layerOf makes a reproducible gzipped tar of files, as Layer does, of media type mt.
func layerOf(mt types.MediaType, mtime time.Time, files []File, dirs ...Dir) (v1.Layer, error) {
	entries := map[string]*tar.Header{}
	addDir := func(p string, mode os.FileMode, uid, gid int) {
		for d := p; d != "." && d != ""; d = path.Dir(d) {
			if _, ok := entries[d+"/"]; !ok {
				entries[d+"/"] = &tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}
			}
		}
		h := entries[p+"/"]
		h.Mode, h.Uid, h.Gid = tarMode(mode), uid, gid
	}
	for _, d := range dirs {
		addDir(strings.Trim(d.Path, "/"), d.Mode, d.UID, d.GID)
	}
	data := map[string][]byte{}
	for _, f := range files {
		p := strings.Trim(f.Path, "/")
		if p == "" || strings.Contains(p, "..") {
			return nil, fmt.Errorf("layer file %q: not a path inside the image", f.Path)
		}
		if _, dup := data[p]; dup {
			return nil, fmt.Errorf("layer file %s: given twice", p)
		}
		if parent := path.Dir(p); parent != "." {
			if _, ok := entries[parent+"/"]; !ok {
				addDir(parent, 0o755, 0, 0)
			}
		}
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		entries[p] = &tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: tarMode(mode), Uid: f.UID, Gid: f.GID, Size: int64(len(f.Data))}
		data[p] = f.Data
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		h := entries[n]
		h.ModTime = mtime.UTC().Truncate(time.Second)
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(data[n]); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	// The compressed layer is kept once made: it is hashed, then pushed, then perhaps pushed again.
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
		tarball.WithMediaType(mt), tarball.WithCompressedCaching)
}

// tarMode is a mode as a tar header holds it: the permission bits, and 01000 for sticky.
func tarMode(m os.FileMode) int64 {
	v := int64(m.Perm())
	if m&os.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}
