package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(body)
}

func TestTheWorkloadAnswersAndIsReady(t *testing.T) {
	h := handler(false)
	code, body := get(t, h, "/")
	require.Equal(t, http.StatusOK, code)
	require.True(t, strings.HasPrefix(body, "Hello from "))
	code, _ = get(t, h, "/healthz")
	require.Equal(t, http.StatusOK, code)
	code, body = get(t, h, "/work?ms=5")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "worked 5 ms")
}

func TestANeverReadyWorkloadAnswersButIsNotReady(t *testing.T) {
	h := handler(true)
	code, _ := get(t, h, "/")
	require.Equal(t, http.StatusOK, code)
	code, _ = get(t, h, "/healthz")
	require.Equal(t, http.StatusServiceUnavailable, code)
}

func TestWorkRefusesABadDuration(t *testing.T) {
	for _, q := range []string{"", "ms=x", "ms=-1", "ms=10001"} {
		code, body := get(t, handler(false), "/work?"+q)
		require.Equal(t, http.StatusBadRequest, code, q)
		require.Contains(t, body, "ms: want a number of milliseconds")
	}
}
