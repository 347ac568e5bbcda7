package zktest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a throwaway certificate authority for TLS tests. It issues the
// server certificates of WithTLS (real ZooKeeper) and ServerTLS (the
// reference server), and client certificates for ZooKeeper's x509
// authentication. Keys are ECDSA P-256; certificates are valid for a day.
// Its methods are safe for concurrent use.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA creates a certificate authority for the test.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("zktest: NewCA: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "zktest CA " + serial().Text(36)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatalf("zktest: NewCA: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("zktest: NewCA: %v", err)
	}
	return &CA{cert: cert, key: key}
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err)
	}
	return n
}

// CertPool returns a pool holding the CA's certificate: what a client that
// trusts this CA puts in tls.Config.RootCAs.
func (ca *CA) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// CertPEM returns the CA's certificate in PEM form.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// CertFile writes the CA's certificate as a PEM file in a temporary
// directory of the test and returns its path (for zkit's --tls-ca).
func (ca *CA) CertFile(t testing.TB) string {
	t.Helper()
	return writeFile(t, "ca.pem", ca.CertPEM())
}

// ServerCert issues a certificate for a server on 127.0.0.1 or localhost.
func (ca *CA) ServerCert(t testing.TB) tls.Certificate {
	t.Helper()
	return must(t)(ca.serverCert())
}

func (ca *CA) serverCert() (tls.Certificate, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// ClientCert issues a client certificate whose subject is CN=name. Over
// TLS, ZooKeeper's x509 provider authenticates its holder as "CN=name":
// client.X509ACL(perms, "CN="+name) grants it perms.
func (ca *CA) ClientCert(t testing.TB, name string) tls.Certificate {
	t.Helper()
	return must(t)(ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}))
}

// ClientCertFiles issues ClientCert(name) and writes it and its key as PEM
// files in a temporary directory of the test (for zkit's --tls-cert and
// --tls-key).
func (ca *CA) ClientCertFiles(t testing.TB, name string) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM, err := encodePEM(ca.ClientCert(t, name))
	if err != nil {
		t.Fatalf("zktest: %v", err)
	}
	return writeFile(t, name+".pem", certPEM), writeFile(t, name+"-key.pem", keyPEM)
}

// ClientTLS returns a client configuration that trusts the CA and presents
// certs (none: the client is not authenticated by certificate).
func (ca *CA) ClientTLS(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: ca.CertPool(), Certificates: certs, MinVersion: tls.VersionTLS12}
}

// ServerTLS returns a server configuration with a ServerCert that asks
// clients for a certificate signed by the CA and accepts clients without
// one, as WithTLS configures ZooKeeper (ssl.clientAuth=want).
func (ca *CA) ServerTLS(t testing.TB) *tls.Config {
	t.Helper()
	return &tls.Config{
		Certificates: []tls.Certificate{ca.ServerCert(t)},
		ClientCAs:    ca.CertPool(),
		ClientAuth:   tls.VerifyClientCertIfGiven,
		MinVersion:   tls.VersionTLS12,
	}
}

func (ca *CA) issue(tmpl *x509.Certificate) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("zktest: issuing a certificate: %w", err)
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("zktest: issuing a certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("zktest: issuing a certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key, Leaf: leaf}, nil
}

// must turns a certificate and an error into the certificate, failing t on
// the error.
func must(t testing.TB) func(tls.Certificate, error) tls.Certificate {
	return func(c tls.Certificate, err error) tls.Certificate {
		t.Helper()
		if err != nil {
			t.Fatalf("%v", err)
		}
		return c
	}
}

// encodePEM returns cert's chain and its key (PKCS #8, which ZooKeeper's
// PEM loader requires) in PEM form.
func encodePEM(cert tls.Certificate) (certPEM, keyPEM []byte, err error) {
	for _, der := range cert.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return nil, nil, fmt.Errorf("zktest: encoding a key: %w", err)
	}
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatalf("zktest: %v", err)
	}
	return p
}
