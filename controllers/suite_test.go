package controllers_test

import (
	"os"
	"testing"

	"github.com/mycompany/app-operator/internal/envtest"
)

// env runs the operator against a real API server for every test in this package.
var env *envtest.Environment

func TestMain(m *testing.M) { os.Exit(envtest.Run(m, &env)) }
