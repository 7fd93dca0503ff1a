// Command images builds App Operator's images without a container engine and pushes them
// (make images, make images-push); see package internal/release/publish.
//
//	images build --version 0.5.0 --tag-base quay.io/mycompany/app-operator --out _output/images
//	images push --layout _output/images --registry 127.0.0.1:5000/mycompany
//
// build writes an OCI image layout holding, each for linux/amd64 and linux/arm64: the manager,
// the bundle (its ClusterServiceVersion naming the manager by digest), the catalog (catalog/
// with this release added, and opm's serve cache), the scorecard tests, the sample workload,
// and the opm image the catalog is built on; and, from 0.5.0, the Helm chart as helm push
// publishes it (<tag-base's directory>/charts/app-operator:<version>). A version recorded as
// cut is built from its commit, one being prepared from the checkout. push keeps each one's
// path below the directory they share: the chart goes to <registry>/charts/app-operator.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/internal/release/image"
	"github.com/mycompany/app-operator/internal/release/publish"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "build":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		version := fs.String("version", "", "Release to build; catalog/releases.yaml must record it.")
		tagBase := fs.String("tag-base", "quay.io/mycompany/app-operator", "Repository of the manager image; the others are named after it.")
		out := fs.String("out", "_output/images", "OCI image layout to write.")
		opm := fs.String("opm", "bin/opm", "Path of an opm that runs here, for the catalog's serve cache and rendering.")
		_ = fs.Parse(args)
		err = build(ctx, *version, *tagBase, *out, *opm)
	case "push":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		layout := fs.String("layout", "_output/images", "OCI image layout written by build.")
		registry := fs.String("registry", "", "Registry and path to push to, such as 127.0.0.1:5000/mycompany.")
		_ = fs.Parse(args)
		err = push(ctx, *layout, *registry)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: images build|push [flags]")
	os.Exit(2)
}

func build(ctx context.Context, version, tagBase, out, opm string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	releases, err := release.Load(filepath.Join(root, "catalog"))
	if err != nil {
		return err
	}
	r, ok := releases.Find(version)
	if !ok {
		return fmt.Errorf("--version %q is not in catalog/releases.yaml", version)
	}
	p, err := publish.ForCheckout(ctx, root, tagBase)
	if err != nil {
		return err
	}
	p.HostOPM = opm
	step := func(format string, args ...any) { fmt.Printf(">> "+format+"\n", args...) }

	step("building the manager and bundle of %s", version)
	imgs, err := p.Build(ctx, r)
	if err != nil {
		return err
	}
	defer imgs.Close()
	step("building the scorecard tests, the sample workload and the Helm chart")
	built, err := p.Candidate(ctx, imgs)
	if err != nil {
		return err
	}
	built = append([]image.Built{imgs.Manager, imgs.Bundle}, built...)

	step("building the catalog")
	tmp, err := os.MkdirTemp("", "app-operator-catalog-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	catalogDir := filepath.Join(root, "catalog")
	if !r.Cut() {
		catalogDir = filepath.Join(tmp, "catalog")
		if err := publish.WithCandidate(ctx, opm, filepath.Join(root, "catalog"), catalogDir, imgs, releases); err != nil {
			return err
		}
	}
	catalogImage, err := p.CatalogImage(ctx, imgs, catalogDir)
	if err != nil {
		return err
	}
	opmIdx, err := p.OPM(ctx, imgs.Source.Created)
	if err != nil {
		return err
	}
	built = append(built, catalogImage, image.Built{Repo: p.Repo("-opm"), Tag: publish.Tag(version), Artifact: opmIdx})
	if err := image.WriteLayout(out, built); err != nil {
		return err
	}
	for _, b := range built {
		ref, err := b.ByDigest()
		if err != nil {
			return err
		}
		fmt.Printf("%-55s %s\n", b.Ref(), ref[strings.LastIndex(ref, "@")+1:])
	}
	fmt.Printf("wrote %d artifacts to %s\n", len(built), out)
	return nil
}

func push(ctx context.Context, layout, registry string) error {
	if registry == "" {
		return errors.New("--registry is required: the registry and path to push to, such as 127.0.0.1:5000/mycompany")
	}
	built, err := image.ReadLayout(layout)
	if err != nil {
		return err
	}
	moved := image.Rebase(built, registry)
	if err := image.Push(ctx, moved); err != nil {
		return err
	}
	for _, b := range moved {
		ref, err := b.ByDigest()
		if err != nil {
			return err
		}
		fmt.Printf("pushed %s (%s)\n", b.Ref(), ref)
	}
	return nil
}
