package main

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// serve starts a TLS server configured as the manager configures its webhook and metrics
// servers.
func serve(t *testing.T, enableHTTP2 bool) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	srv.EnableHTTP2 = true // what the options must undo
	srv.TLS = &tls.Config{}
	for _, opt := range tlsOptions(enableHTTP2) {
		opt(srv.TLS)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func handshake(addr string, maxVersion uint16, protos ...string) (*tls.ConnectionState, error) {
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: maxVersion, NextProtos: protos}) //nolint:gosec
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	st := conn.ConnectionState()
	return &st, nil
}

func TestTLSBelow1_2IsRefused(t *testing.T) {
	addr := serve(t, false)
	_, err := handshake(addr, tls.VersionTLS11)
	require.Error(t, err, "TLS 1.1 must be refused")
	st, err := handshake(addr, tls.VersionTLS12)
	require.NoError(t, err)
	require.Equal(t, uint16(tls.VersionTLS12), st.Version)
	st, err = handshake(addr, tls.VersionTLS13)
	require.NoError(t, err)
	require.Equal(t, uint16(tls.VersionTLS13), st.Version)
}

func TestHTTP2IsOffUnlessEnabled(t *testing.T) {
	st, err := handshake(serve(t, false), tls.VersionTLS13, "h2", "http/1.1")
	require.NoError(t, err)
	require.Equal(t, "http/1.1", st.NegotiatedProtocol, "HTTP/2 is off by default")

	st, err = handshake(serve(t, true), tls.VersionTLS13, "h2", "http/1.1")
	require.NoError(t, err)
	require.Equal(t, "h2", st.NegotiatedProtocol, "--enable-http2 turns it on")
}
