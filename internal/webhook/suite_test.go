package webhook_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/mycompany/app-operator/test/envtest"
)

// env serves the operator's webhooks over TLS to a real API server.
var env *envtest.Environment

func TestMain(m *testing.M) {
	var err error
	if env, err = envtest.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
