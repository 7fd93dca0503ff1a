// Command localcluster runs App Operator on a local control plane with the real OLM, for
// make demo, make demo-down and make run-bundle. Everything it starts keeps running after it
// exits, recorded under .cache/local, until `localcluster down`.
//
//	localcluster up          start the cluster and OLM, install App Operator from catalog/,
//	                         create the sample App and wait until it is Available
//	localcluster run-bundle  install bundle/ alone, as `operator-sdk run bundle` would
//	localcluster scorecard   run App Operator's scorecard tests against the local cluster
//	localcluster down        stop everything up started
//	localcluster egress      (internal) serve the API server's egress to webhooks
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		bundle := fs.String("bundle", filepath.Join(root, "bundle"), "Bundle directory to install.")
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
	case "egress":
		err = egress(ctx, dir)
	default:
		usage()
	}
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

// egress serves the API server's egress to webhooks until stopped.
func egress(ctx context.Context, dir string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig.yaml"))
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: localcluster.Scheme()})
	if err != nil {
		return err
	}
	socket, err := os.ReadFile(filepath.Join(dir, "egress-socket"))
	if err != nil {
		return err
	}
	return localcluster.ServeEgress(ctx, string(socket), filepath.Join(dir, "routes.json"), c)
}
