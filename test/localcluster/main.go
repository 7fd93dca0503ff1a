package localcluster

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/mycompany/app-operator/internal/checkout"
)

// RepoRoot is the root of the repository (checkout.Root).
func RepoRoot() string { return checkout.MustRoot() }

// Main is the TestMain of a suite that starts clusters under .cache/<suite>: its clients log
// only errors (every component logs to its cluster's directory), and clusters an earlier,
// killed run left behind are stopped first. run runs the tests; nil means m.Run. What building
// the releases left on disk is removed once they have run (CloseReleases).
func Main(m *testing.M, suite string, run func(*testing.M) int) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	Reap(filepath.Join(RepoRoot(), ".cache", suite), filepath.Join(RepoRoot(), "bin"))
	defer CloseReleases()
	if run == nil {
		return m.Run()
	}
	return run(m)
}
