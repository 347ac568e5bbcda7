package zktest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CA's certificates verify for what they are issued for, and only
// against this CA.
func TestCA(t *testing.T) {
	ca := NewCA(t)
	other := NewCA(t)
	server := ca.ServerCert(t)
	for _, name := range []string{"127.0.0.1", "localhost"} {
		if _, err := server.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: ca.CertPool()}); err != nil {
			t.Errorf("server certificate for %s: %v", name, err)
		}
	}
	if _, err := server.Leaf.Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: other.CertPool()}); err == nil {
		t.Error("another CA verifies the server certificate")
	}
	if _, err := server.Leaf.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: ca.CertPool()}); err == nil {
		t.Error("the server certificate verifies for example.com")
	}

	alice := ca.ClientCert(t, "alice")
	if got := alice.Leaf.Subject.String(); got != "CN=alice" {
		t.Errorf("client certificate subject %q, want CN=alice", got)
	}
	opts := x509.VerifyOptions{Roots: ca.CertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := alice.Leaf.Verify(opts); err != nil {
		t.Errorf("client certificate: %v", err)
	}

	// The files load as a key pair and a CA.
	certFile, keyFile := ca.ClientCertFiles(t, "bob")
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || leaf.Subject.CommonName != "bob" {
		t.Errorf("ClientCertFiles: %v, %v", leaf, err)
	}
	caPEM, err := os.ReadFile(ca.CertFile(t))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CertFile holds no certificate")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: opts.KeyUsages}); err != nil {
		t.Errorf("CertFile does not verify ClientCertFiles' certificate: %v", err)
	}
}

// WithTLS writes a secure client port, ZooKeeper's TLS settings and PEM
// key and trust stores; WithConfig overrides the settings.
func TestWithTLSConfig(t *testing.T) {
	ca := NewCA(t)
	dir := t.TempDir()
	cfg := newConfig([]Option{WithTLS(ca), WithConfig("ssl.clientAuth", "need")})
	nd := &node{clientPort: 2181, securePort: 2281, dir: dir}
	z := &ZooKeeper{inst: &Install{}, cfg: cfg, dir: dir, nodes: []*node{nd}}
	if err := z.writeConfig(nd, nil); err != nil {
		t.Fatal(err)
	}
	zooCfg, err := os.ReadFile(filepath.Join(dir, "zoo.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"secureClientPort=2281", "secureClientPortAddress=127.0.0.1",
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"ssl.keyStore.type=PEM", "ssl.trustStore.type=PEM", "ssl.clientAuth=need",
		"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
	} {
		if !strings.Contains(string(zooCfg), line+"\n") {
			t.Errorf("zoo.cfg lacks %q:\n%s", line, zooCfg)
		}
	}
	if strings.Contains(string(zooCfg), "ssl.clientAuth=want") {
		t.Errorf("WithConfig did not override ssl.clientAuth:\n%s", zooCfg)
	}
	// The key store holds a PKCS #8 key and the certificate chain.
	ks, err := os.ReadFile(filepath.Join(dir, "keystore.pem"))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for rest := ks; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		types = append(types, b.Type)
	}
	if strings.Join(types, ",") != "PRIVATE KEY,CERTIFICATE,CERTIFICATE" {
		t.Errorf("keystore.pem holds %v", types)
	}
	if got := z.SecureServers(); len(got) != 1 || got[0] != "127.0.0.1:2281" {
		t.Errorf("SecureServers = %v", got)
	}
	if got := (&ZooKeeper{nodes: []*node{nd}}).SecureServers(); got != nil {
		t.Errorf("SecureServers without TLS = %v", got)
	}
}
