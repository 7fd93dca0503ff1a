// Command catalog renders the bundle into App Operator's file-based catalog, catalog/
// (make catalog):
//
//	go run ./hack/catalog --opm bin/opm --bundle bundle --catalog catalog
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mycompany/app-operator/internal/catalog"
)

func main() {
	opm := flag.String("opm", "bin/opm", "Path of opm.")
	bundleDir := flag.String("bundle", "bundle", "Bundle directory to render into the catalog.")
	dir := flag.String("catalog", "catalog", "Catalog directory.")
	flag.Parse()
	if err := catalog.Render(*opm, *bundleDir, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "catalog:", err)
		os.Exit(1)
	}
}
