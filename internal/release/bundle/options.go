// Package bundle turns the manifests that `kustomize build config/manifests` prints into App
// Operator's OLM bundle, as operator-sdk's `generate bundle` does: the ClusterServiceVersion
// with its install strategy (the Deployment, and as permissions the rules bound to its
// ServiceAccount) and webhook definitions, the CRDs and other manifests OLM installs,
// metadata/annotations.yaml, the scorecard configuration and bundle.Dockerfile. The output
// depends only on its input and options, never on the clock.
package bundle

import (
	"fmt"
	"strings"
	"time"

	"github.com/blang/semver/v4"

	"github.com/mycompany/app-operator/internal/release"
)

// Options describe the release a bundle is made for.
type Options struct {
	// Version is the release's version, such as 0.1.0.
	Version string
	// Image is the manager image of the release.
	Image string
	// ScorecardImage is the image of the custom scorecard tests.
	ScorecardImage string
	// CreatedAt is the release date, RFC 3339.
	CreatedAt string
	// Replaces names the ClusterServiceVersion this release replaces, if any.
	Replaces string
	// SkipRange are the versions this release may be installed over directly, if any.
	SkipRange string
	// Channels are the channels the release is published in; DefaultChannel is the
	// package's default channel.
	Channels       []string
	DefaultChannel string
	// InstallNamespace is the namespace the CRD's conversion webhook names until OLM points it
	// at the Service it makes: where OLM installs operators of all namespaces.
	InstallNamespace string
}

// DefaultInstallNamespace is the namespace of OLM's global OperatorGroup upstream.
const DefaultInstallNamespace = "operators"

// ForRelease returns the options of a recorded release: its date, and where the record puts
// it in the upgrade graph.
func ForRelease(rs release.Releases, version string) (Options, error) {
	r, ok := rs.Find(version)
	if !ok {
		return Options{}, fmt.Errorf("version %s is not in %s: add it as the release being prepared", version, release.RecordFile)
	}
	replaces, skipRange, err := rs.Graph(version)
	if err != nil {
		return Options{}, err
	}
	return Options{Version: version, CreatedAt: r.CreatedAt(), Replaces: replaces, SkipRange: skipRange,
		Channels: []string{"stable"}, DefaultChannel: "stable", InstallNamespace: DefaultInstallNamespace}, nil
}

// Validate reports every option that cannot make a bundle, each named.
func (o Options) Validate() error {
	var errs []string
	if _, err := semver.Parse(o.Version); err != nil {
		errs = append(errs, fmt.Sprintf("version %q: %v", o.Version, err))
	}
	if o.Image == "" {
		errs = append(errs, "the manager image is required")
	}
	if o.ScorecardImage == "" {
		errs = append(errs, "the scorecard image is required")
	}
	if _, err := time.Parse(time.RFC3339, o.CreatedAt); err != nil {
		errs = append(errs, fmt.Sprintf("createdAt %q is not RFC 3339", o.CreatedAt))
	}
	if o.SkipRange != "" {
		if _, err := semver.ParseRange(o.SkipRange); err != nil {
			errs = append(errs, fmt.Sprintf("skipRange %q: %v", o.SkipRange, err))
		}
	}
	if len(o.Channels) == 0 {
		errs = append(errs, "at least one channel is required")
	}
	for _, c := range o.Channels {
		if c == "" || strings.ContainsAny(c, ", ") {
			errs = append(errs, fmt.Sprintf("channel %q is not a channel name", c))
		}
	}
	if !contains(o.Channels, o.DefaultChannel) {
		errs = append(errs, fmt.Sprintf("the default channel %q must be one of the channels %v", o.DefaultChannel, o.Channels))
	}
	if o.InstallNamespace == "" {
		errs = append(errs, "the install namespace is required")
	}
	if len(errs) > 0 {
		return fmt.Errorf("bundle options: %s", strings.Join(errs, "; "))
	}
	return nil
}

func (o Options) csvName() string { return release.CSVName(o.Version) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
