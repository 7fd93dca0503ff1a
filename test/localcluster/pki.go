package localcluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// pkiDir is where kwokctl keeps the cluster's certificate authority.
func (c *Cluster) pkiDir() string { return filepath.Join(c.Dir, "kwok", "clusters", c.Name, "pki") }

// clientKubeconfig writes a kubeconfig that authenticates with a client certificate the
// cluster's CA signs for user (and groups), as kubeadm gives the kubelet and kube-proxy theirs.
func (c *Cluster) clientKubeconfig(path, user string, groups ...string) error {
	certPEM, keyPEM, caPEM, err := c.sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return err
	}
	admin, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return err
	}
	server := ""
	for _, cl := range admin.Clusters {
		server = cl.Server
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// servingCert writes a serving certificate the cluster's CA signs for ip, and its key, as
// <dir>/serving.crt and <dir>/serving.key: what a kubelet serves with once its certificate
// signing request is approved, so that clients such as metrics-server verify it.
func (c *Cluster) servingCert(dir, name string, ip net.IP) (certFile, keyFile string, err error) {
	certPEM, keyPEM, _, err := c.sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		DNSNames:    []string{name},
		IPAddresses: []net.IP{ip},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "serving.crt"), filepath.Join(dir, "serving.key")
	if err := writeFile(certFile, certPEM); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, keyPEM, 0o600)
}

// sign has the cluster's CA sign a certificate of tmpl's subject, names and usages for a new
// key, valid for a year. It returns the certificate, the key and the CA's certificate.
func (c *Cluster) sign(tmpl *x509.Certificate) (certPEM, keyPEM, caPEM []byte, err error) {
	caPEM, err = os.ReadFile(filepath.Join(c.pkiDir(), "ca.crt"))
	if err != nil {
		return nil, nil, nil, err
	}
	caKeyPEM, err := os.ReadFile(filepath.Join(c.pkiDir(), "ca.key"))
	if err != nil {
		return nil, nil, nil, err
	}
	ca, caKey, err := parseCA(caPEM, caKeyPEM)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, nil, err
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, big.NewInt(1<<62)); err != nil {
		return nil, nil, nil, err
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(365*24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), caPEM, nil
}

func parseCA(certPEM, keyPEM []byte) (*x509.Certificate, *rsa.PrivateKey, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("the cluster's CA is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	if key, err := x509.ParsePKCS1PrivateKey(kb.Bytes); err == nil {
		return cert, key, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("the cluster's CA key is not RSA")
	}
	return cert, key, nil
}
