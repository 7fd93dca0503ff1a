// Command app-scorecard is App Operator's custom scorecard test image: it runs one test against
// the cluster it is given and prints the result as a scorecard v1alpha3 TestStatus, the only
// output scorecard reads. The tests are named in bundle/tests/scorecard/config.yaml:
//
//	app-scorecard app-becomes-available|invalid-app-refused
//
// It uses the in-cluster configuration in scorecard's test pod, or KUBECONFIG elsewhere, and
// creates what it needs in SCORECARD_NAMESPACE (default "default"), deleting it afterwards.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mycompany/app-operator/internal/operator"
)

func main() {
	name := ""
	if len(os.Args) == 2 {
		name = os.Args[1]
	}
	result := run(name)
	out, err := json.MarshalIndent(v1alpha3.TestStatus{Results: []v1alpha3.TestResult{result}}, "", "  ")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
}

func run(name string) v1alpha3.TestResult {
	test, ok := tests[name]
	if !ok {
		return v1alpha3.TestResult{Name: name, State: v1alpha3.ErrorState, Errors: []string{fmt.Sprintf("unknown test %q", name)}}
	}
	ns := os.Getenv("SCORECARD_NAMESPACE")
	if ns == "" {
		ns = "default"
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return v1alpha3.TestResult{Name: name, State: v1alpha3.ErrorState, Errors: []string{err.Error()}}
	}
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return v1alpha3.TestResult{Name: name, State: v1alpha3.ErrorState, Errors: []string{err.Error()}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := test(ctx, c, ns)
	r.Name = name
	return r
}
