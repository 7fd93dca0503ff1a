// Command catalog adds the bundle to App Operator's file-based catalog, catalog/ (make
// catalog); see package internal/release/catalog:
//
//	go run ./hack/catalog --opm bin/opm --bundle bundle --catalog catalog
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mycompany/app-operator/internal/release/catalog"
)

func main() {
	opm := flag.String("opm", "bin/opm", "Path of opm.")
	bundleDir := flag.String("bundle", "bundle", "Bundle directory to add to the catalog.")
	dir := flag.String("catalog", "catalog", "Catalog directory.")
	flag.Parse()
	if err := catalog.Add(*opm, *bundleDir, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "catalog:", err)
		os.Exit(1)
	}
}
