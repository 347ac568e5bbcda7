package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// --tls-ca, --tls-cert and --tls-key against servers with a TLS client
// port: real ZooKeeper (secureClientPort) and the reference server.
func TestTLSFlags(t *testing.T) {
	t.Parallel()
	ca := zktest.NewCA(t)
	caFile := ca.CertFile(t)
	certFile, keyFile := ca.ClientCertFiles(t, "alice")
	zktest.EachTLSBackend(t, ca, func(t *testing.T, b zktest.Backend) {
		servers := strings.Join(b.Servers, ",")
		path := zktest.UniquePath(t)

		// Trusting the servers' CA, the command works over TLS.
		r := zkit(t, "counter", path+"/open", "add", "1", "--servers", servers, "--tls-ca", caFile)
		if r.status != exitOK || r.stdout != "1\n" {
			t.Fatalf("over TLS: status %d, stdout %q, stderr %q", r.status, r.stdout, r.stderr)
		}

		// Another CA: one line saying the certificate is not trusted, at once.
		start := time.Now()
		r = zkit(t, "counter", path+"/open", "get", "--servers", servers, "--tls-ca", zktest.NewCA(t).CertFile(t))
		if r.status != exitFailed {
			t.Fatalf("wrong CA: status %d, want %d (%q)", r.status, exitFailed, r.stderr)
		}
		oneErrorLine(t, r, "zkit counter: ", "is not trusted by --tls-ca", "pass --tls-ca with the CA that signed it")
		if took := time.Since(start); took > zktest.Scale(2*time.Second) {
			t.Errorf("wrong CA took %v to fail", took)
		}

		// A counter only alice's certificate may touch: with it the
		// command works, without it the server says no.
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
		defer cancel()
		alice := b.Connect(t, client.WithTLS(ca.ClientTLS(ca.ClientCert(t, "alice"))))
		mine := path + "/alice"
		if _, err := alice.Create(ctx, mine, make([]byte, 8), client.Persistent, client.WithACL(client.X509ACL(client.PermAll, "CN=alice")...)); err != nil {
			t.Fatal(err)
		}
		r = zkit(t, "counter", mine, "add", "2", "--servers", servers, "--tls-ca", caFile, "--tls-cert", certFile, "--tls-key", keyFile)
		if r.status != exitOK || r.stdout != "2\n" {
			t.Fatalf("with alice's certificate: status %d, stdout %q, stderr %q", r.status, r.stdout, r.stderr)
		}
		r = zkit(t, "counter", mine, "add", "2", "--servers", servers, "--tls-ca", caFile)
		if r.status == exitOK || !strings.Contains(r.stderr, "not authenticated") {
			t.Fatalf("without a certificate: status %d, stdout %q, stderr %q; want refused", r.status, r.stdout, r.stderr)
		}
		if d, _, err := alice.Get(ctx, mine); err != nil || d[7] != 2 {
			t.Fatalf("counter data %x, %v; want 2", d, err)
		}
	})
}

// Bad TLS flags are usage errors, before anything is dialled.
func TestTLSFlagsUsage(t *testing.T) {
	t.Parallel()
	ca := zktest.NewCA(t)
	certFile, keyFile := ca.ClientCertFiles(t, "alice")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", certFile}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-key", keyFile}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-ca", "/nonexistent/ca.pem"}, "--tls-ca: open /nonexistent/ca.pem"},
		{[]string{"--tls-ca", keyFile}, "holds no PEM certificate"},
		{[]string{"--tls-cert", keyFile, "--tls-key", keyFile}, "--tls-cert " + keyFile},
	} {
		args := append([]string{"counter", "/x", "get", "--servers", "127.0.0.1:1"}, tc.args...)
		r := zkit(t, args...)
		if r.status != exitUsage {
			t.Errorf("zkit %q: status %d, want %d (%q)", args, r.status, exitUsage, r.stderr)
			continue
		}
		oneErrorLine(t, r, tc.want)
	}
}
