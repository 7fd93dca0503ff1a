// Command bundle writes App Operator's OLM bundle (make bundle) from the manifests that
// `kustomize build config/manifests` prints, for a release recorded in catalog/releases.yaml,
// which decides its date, the release it replaces and its skipRange:
//
//	kustomize build config/manifests | go run ./hack/bundle --version 0.4.0 --image ... --scorecard-image ...
//
// It writes bundle/ and bundle.Dockerfile; see package internal/release/bundle. With
// --use-image-digests (make bundle USE_IMAGE_DIGESTS=true), the ClusterServiceVersion names the
// manager by the digest of the image make images built.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/mycompany/app-operator/internal/release"
	"github.com/mycompany/app-operator/internal/release/bundle"
	relimage "github.com/mycompany/app-operator/internal/release/image"
)

func main() {
	version := flag.String("version", "", "Release version, such as 0.1.0; catalog/releases.yaml must record it.")
	image := flag.String("image", "", "Manager image of the release.")
	scorecardImage := flag.String("scorecard-image", "", "Image of the custom scorecard tests.")
	channels := flag.String("channels", "stable", "Channels of the release, comma separated.")
	defaultChannel := flag.String("default-channel", "stable", "Default channel of the package.")
	installNamespace := flag.String("install-namespace", bundle.DefaultInstallNamespace, "Namespace the CRD's conversion webhook names until OLM points it at its own Service.")
	catalogDir := flag.String("catalog", "catalog", "Catalog directory holding releases.yaml.")
	dir := flag.String("output-dir", "bundle", "Directory of the bundle.")
	dockerfile := flag.String("dockerfile", "bundle.Dockerfile", "Path of the bundle's Dockerfile.")
	useDigests := flag.Bool("use-image-digests", false, "Name the manager image by digest, read from the image layout of make images.")
	images := flag.String("images", "_output/images", "OCI image layout of make images, for --use-image-digests.")
	flag.Parse()

	err := func() error {
		releases, err := release.Load(*catalogDir)
		if err != nil {
			return err
		}
		o, err := bundle.ForRelease(releases, *version)
		if err != nil {
			return err
		}
		o.Image, o.ScorecardImage, o.InstallNamespace = *image, *scorecardImage, *installNamespace
		if *useDigests {
			if o.Image, err = byDigest(*images, *image); err != nil {
				return err
			}
		}
		o.Channels, o.DefaultChannel = strings.Split(*channels, ","), *defaultChannel
		b, err := bundle.Generate(os.Stdin, o)
		if err != nil {
			return err
		}
		return b.Write(*dir, *dockerfile)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

// byDigest names an image of the layout by digest.
func byDigest(layout, ref string) (string, error) {
	built, err := relimage.ReadLayout(layout)
	if err != nil {
		return "", err
	}
	for _, b := range built {
		if b.Ref() == ref {
			return b.ByDigest()
		}
	}
	return "", fmt.Errorf("%s holds no image %s: run make images first", layout, ref)
}
