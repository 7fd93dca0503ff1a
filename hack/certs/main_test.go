package main

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheCertificateServesBothServicesUntilItExpires(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	files, err := issue(DNSNames("ops"), now, 30*24*time.Hour)
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(files["tls.crt"], files["tls.key"])
	require.NoError(t, err, "tls.key is tls.crt's key")
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(files["ca.crt"]))

	for _, tc := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"app-operator-webhook-service.ops.svc", now, true},
		{"app-operator-controller-manager-metrics-service.ops.svc.cluster.local", now.Add(29 * 24 * time.Hour), true},
		{"app-operator-webhook-service.other.svc", now, false},
		{"app-operator-webhook-service.ops.svc", now.Add(31 * 24 * time.Hour), false},
	} {
		_, err := cert.Verify(x509.VerifyOptions{DNSName: tc.name, Roots: roots, CurrentTime: tc.at})
		assert.Equal(t, tc.ok, err == nil, "%s at %s: %v", tc.name, tc.at, err)
	}
}

func TestAValidityOfLessThanADayIsRefusedByName(t *testing.T) {
	for days, want := range map[int]string{0: "--days must be at least 1, got 0", -3: "--days must be at least 1, got -3"} {
		assert.EqualError(t, validDays(days), want)
	}
	assert.NoError(t, validDays(1))
}
