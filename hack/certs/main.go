// Command certs makes a CA and a serving certificate for the manager's webhooks and metrics
// endpoint, for installs without cert-manager (make certificates, then
// make deploy CERT_DIR=...). It writes ca.crt, tls.crt and tls.key into a folder; the
// certificate is valid for both of the manager's Services in namespace.
//
//	go run ./hack/certs --out .cache/certs --namespace app-operator-system
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// The manager's Services, as config/default names them.
var services = []string{"app-operator-webhook-service", "app-operator-controller-manager-metrics-service"}

func main() {
	out := flag.String("out", ".cache/certs", "Folder to write ca.crt, tls.crt and tls.key into.")
	namespace := flag.String("namespace", "app-operator-system", "Namespace the manager runs in.")
	days := flag.Int("days", 365, "How many days the serving certificate is valid; the CA is valid ten times as long.")
	flag.Parse()
	if err := validDays(*days); err != nil {
		fmt.Fprintln(os.Stderr, "certs:", err)
		os.Exit(2)
	}
	if err := write(*out, *namespace, time.Duration(*days)*24*time.Hour); err != nil {
		fmt.Fprintln(os.Stderr, "certs:", err)
		os.Exit(1)
	}
}

// validDays refuses a validity that would make a certificate expired when written.
func validDays(days int) error {
	if days < 1 {
		return fmt.Errorf("--days must be at least 1, got %d", days)
	}
	return nil
}

func write(dir, namespace string, validity time.Duration) error {
	files, err := issue(DNSNames(namespace), time.Now(), validity)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	fmt.Printf("wrote ca.crt, tls.crt and tls.key to %s, valid until %s\n", dir, time.Now().Add(validity).Format(time.DateOnly))
	return nil
}

// DNSNames are the names the API server and scrapers dial the manager's Services by.
func DNSNames(namespace string) []string {
	var names []string
	for _, s := range services {
		names = append(names, s+"."+namespace+".svc", s+"."+namespace+".svc.cluster.local")
	}
	return names
}

// issue makes a CA and a certificate it signs for names, valid from now for validity (the CA
// ten times as long), and returns them as PEM files: ca.crt, tls.crt and tls.key.
func issue(names []string, now time.Time, validity time.Duration) (map[string][]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "app-operator-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		"ca.crt":  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err)
	}
	return n
}
