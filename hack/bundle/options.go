package main

import (
	"fmt"
	"time"

	"github.com/blang/semver/v4"
)

// packageName is the OLM package of App Operator.
const packageName = "app-operator"

type options struct {
	version, image, scorecardImage, createdAt string
	replaces, skipRange                       string
	channels, defaultChannel                  string
	dir, dockerfile                           string
}

func (o options) validate() error {
	if _, err := semver.Parse(o.version); err != nil {
		return fmt.Errorf("--version %q: %w", o.version, err)
	}
	if o.image == "" {
		return fmt.Errorf("--image is required")
	}
	if o.scorecardImage == "" {
		return fmt.Errorf("--scorecard-image is required")
	}
	if _, err := time.Parse(time.RFC3339, o.createdAt); err != nil {
		return fmt.Errorf("--created-at %q is not RFC 3339: %w", o.createdAt, err)
	}
	if o.skipRange != "" {
		if _, err := semver.ParseRange(o.skipRange); err != nil {
			return fmt.Errorf("--skip-range %q: %w", o.skipRange, err)
		}
	}
	return nil
}

func (o options) csvName() string { return packageName + ".v" + o.version }

func parseVersion(v string) (semver.Version, error) { return semver.Parse(v) }
