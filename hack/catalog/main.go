// Command catalog writes App Operator's file-based catalog, catalog/ (make catalog): every cut
// release of catalog/releases.yaml built again from its commit and rendered from its bundle
// image, so that the catalog pins each bundle and manager by digest, and a release whose
// images no longer build the same is refused. See package internal/release/publish.
//
//	go run ./hack/catalog --opm bin/opm --catalog catalog
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/internal/release/publish"
)

func main() {
	opm := flag.String("opm", "bin/opm", "Path of opm.")
	dir := flag.String("catalog", "catalog", "Catalog directory.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *opm, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "catalog:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, opm, dir string) error {
	root, err := filepath.Abs(filepath.Dir(dir))
	if err != nil {
		return err
	}
	releases, err := release.Load(dir)
	if err != nil {
		return err
	}
	p, err := publish.ForCheckout(ctx, root, "")
	if err != nil {
		return err
	}
	p.HostOPM = opm
	return p.UpdateCatalog(ctx, opm, dir, releases, func(msg string) { fmt.Println(">>", msg) })
}
