// Command localcluster runs App Operator on a local cluster with the real OLM, for make demo,
// make demo-down, make run-bundle and make scorecard. Everything it starts keeps running after
// it exits, recorded under .cache/local, until `localcluster down`.
//
//	localcluster up          start the cluster and OLM, publish App Operator's catalog image,
//	                         install from it, create the sample App and wait until it is Available
//	localcluster run-bundle  install one bundle image alone, as `operator-sdk run bundle` would
//	localcluster scorecard   run App Operator's scorecard tests, as pods, against the cluster
//	localcluster down        stop everything up started, and undo what its node did to the machine
//	localcluster registry    (internal) serve the cluster's loopback registry
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/mycompany/app-operator/internal/release/image"
	"github.com/mycompany/app-operator/test/localcluster"
)

const clusterName = "app-demo"

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	dir := filepath.Join(root, ".cache", "local")
	bin := filepath.Join(root, "bin")
	// The clients log errors only; every component logs to the cluster's directory.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "up":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		sample := fs.String("sample", filepath.Join(root, "config", "samples", "mycompany_v1_app.yaml"), "App to create once installed.")
		_ = fs.Parse(args)
		err = up(ctx, root, dir, bin, *sample)
	case "run-bundle":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		bundle := fs.String("bundle", "", "Bundle image to install; empty means the bundle image of the release being prepared.")
		_ = fs.Parse(args)
		err = runBundle(ctx, root, dir, bin, *bundle)
	case "down":
		if _, statErr := os.Stat(dir); statErr != nil {
			fmt.Println("nothing to stop")
			return
		}
		err = localcluster.Down(dir, clusterName, bin)
		if err == nil {
			err = os.RemoveAll(dir)
			fmt.Println("stopped the local cluster")
		}
	case "scorecard":
		err = scorecard(ctx, root, dir, bin)
	case "registry":
		fs := flag.NewFlagSet(cmd, flag.ExitOnError)
		blobs := fs.String("dir", "", "Directory of the registry's blobs.")
		addrFile := fs.String("addr-file", "", "File to write the registry's address to, once it serves.")
		_ = fs.Parse(args)
		err = serveRegistry(ctx, *blobs, *addrFile)
	default:
		usage()
	}
	localcluster.CloseReleases()
	if err != nil {
		fail(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: localcluster up|run-bundle|scorecard|down")
	os.Exit(2)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "localcluster:", err)
	os.Exit(1)
}

func step(format string, args ...any) {
	fmt.Printf("%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// serveRegistry serves an OCI registry on a free loopback port until stopped.
func serveRegistry(ctx context.Context, dir, addrFile string) error {
	reg, err := image.ServeRegistry("127.0.0.1:0", dir, nil)
	if err != nil {
		return err
	}
	if err := os.WriteFile(addrFile, []byte(reg.Addr), 0o644); err != nil {
		return err
	}
	go func() { <-ctx.Done(); _ = reg.Close() }()
	if err := reg.Wait(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
