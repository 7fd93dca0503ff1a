// Command bundle writes App Operator's OLM bundle from the manifests that
// `kustomize build config/manifests` prints, as operator-sdk's `generate bundle` does:
//
//	kustomize build config/manifests | go run ./hack/bundle --version 0.1.0 --image quay.io/mycompany/app-operator:0.1.0 ...
//
// It writes bundle/manifests (the ClusterServiceVersion and every other manifest OLM installs),
// bundle/metadata/annotations.yaml, bundle/tests/scorecard/config.yaml and bundle.Dockerfile.
// The output depends only on its input and flags, never on the clock, so that regenerating a
// committed bundle changes nothing.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "Release version, such as 0.1.0.")
	flag.StringVar(&o.image, "image", "", "Manager image of the release.")
	flag.StringVar(&o.scorecardImage, "scorecard-image", "", "Image of the custom scorecard tests.")
	flag.StringVar(&o.createdAt, "created-at", "", "Release date, RFC 3339, for the createdAt annotation.")
	flag.StringVar(&o.replaces, "replaces", "", "Name of the ClusterServiceVersion this release replaces, if any.")
	flag.StringVar(&o.skipRange, "skip-range", "", "Versions this release may be installed over directly, such as '>=0.1.0 <0.3.0'.")
	flag.StringVar(&o.channels, "channels", "stable", "Channels of the release, comma separated.")
	flag.StringVar(&o.defaultChannel, "default-channel", "stable", "Default channel of the package.")
	flag.StringVar(&o.dir, "output-dir", "bundle", "Directory of the bundle.")
	flag.StringVar(&o.dockerfile, "dockerfile", "bundle.Dockerfile", "Path of the bundle's Dockerfile.")
	flag.Parse()

	if err := run(os.Stdin, o); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, o options) error {
	if err := o.validate(); err != nil {
		return err
	}
	objs, err := decode(in)
	if err != nil {
		return err
	}
	b, err := build(objs, o)
	if err != nil {
		return err
	}
	return b.write(o)
}
