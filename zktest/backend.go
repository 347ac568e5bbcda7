package zktest

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// Backend is a ZooKeeper server a test runs against: real Apache ZooKeeper
// or the bundled reference server. It offers the faults a recipe must
// survive in a form that works on both, using the reference server's own
// hooks where it has them and the fault proxy otherwise.
type Backend struct {
	Name    string   // "zookeeper" or "reference"
	Servers []string // client addresses

	ref   *Server         // the reference server; nil for real ZooKeeper
	tls   *tls.Config     // for clients, with EachTLSBackend
	plain string          // a plain client port of a TLS server, for ExpireSession
	opts  []client.Option // added to every Connect (With)
}

// With returns b whose Connect adds opts to every client it opens (before
// the call's own): a client.WithNamespace, say, to run a test body inside
// a namespace.
func (b Backend) With(opts ...client.Option) Backend {
	b.opts = append(append([]client.Option(nil), b.opts...), opts...)
	return b
}

// RealBackend is the test binary's shared real ZooKeeper (skipped when
// none is installed, failed with ZKIT_REQUIRE_ZOOKEEPER=1).
func RealBackend(t testing.TB) Backend {
	return Backend{Name: "zookeeper", Servers: SharedZooKeeper(t).Servers()}
}

// ReferenceBackend is a fresh reference server for the test, configured
// like the real one (tickTime 200ms, session timeouts from 400ms to 60s)
// and then by opts.
func ReferenceBackend(t testing.TB, opts ...ServerOption) Backend {
	all := append([]ServerOption{ServerTickTime(200 * time.Millisecond), ServerSessionTimeouts(400*time.Millisecond, time.Minute)}, opts...)
	s := NewServer(t, all...)
	return Backend{Name: "reference", Servers: s.Servers(), ref: s}
}

// EachBackend runs fn as a subtest against the test binary's shared real
// ZooKeeper ("zookeeper") and against a fresh reference server
// ("reference"). Tests keep out of each other's way with UniquePath.
func EachBackend(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	t.Run("zookeeper", func(t *testing.T) { fn(t, RealBackend(t)) })
	t.Run("reference", func(t *testing.T) { fn(t, ReferenceBackend(t)) })
}

// EachBackendWith runs fn like EachBackend, on servers of the test's own
// configured by zk and ref: a standalone ZooKeeper started for the test
// with zk (a JVM, which takes a second or two: use it for settings the
// shared server must not have) and a fresh reference server with ref.
func EachBackendWith(t *testing.T, zk []Option, ref []ServerOption, fn func(t *testing.T, b Backend)) {
	t.Helper()
	t.Run("zookeeper", func(t *testing.T) {
		fn(t, Backend{Name: "zookeeper", Servers: StartZooKeeper(t, zk...).Servers()})
	})
	t.Run("reference", func(t *testing.T) { fn(t, ReferenceBackend(t, ref...)) })
}

// EachTLSBackend is EachBackend over TLS. Its real ZooKeeper is started
// for the test, WithTLS(ca) (a JVM of its own: call it once per test
// binary where you can), and its reference server with
// ServerTLS(ca.ServerTLS(t)). b.Servers are their TLS ports, and b.Connect
// connects with client.WithTLS(ca.ClientTLS()): pass a WithTLS of your own
// to present a client certificate (ca.ClientCert), which both servers take
// as an x509 identity. The faults of Backend work over TLS too, but for
// CutNextCreate on real ZooKeeper: its proxy cannot read the frames inside
// TLS, so CutNextCreate fails the test there.
func EachTLSBackend(t *testing.T, ca *CA, fn func(t *testing.T, b Backend)) {
	t.Helper()
	t.Run("zookeeper", func(t *testing.T) {
		z := StartZooKeeper(t, WithTLS(ca))
		fn(t, Backend{Name: "zookeeper", Servers: z.SecureServers(), tls: ca.ClientTLS(), plain: z.Servers()[0]})
	})
	t.Run("reference", func(t *testing.T) {
		b := ReferenceBackend(t, ServerTLS(ca.ServerTLS(t)))
		b.tls = ca.ClientTLS()
		fn(t, b)
	})
}

// Addr is the first server's address.
func (b Backend) Addr() string { return b.Servers[0] }

// Reference is the reference server behind b, or nil on real ZooKeeper:
// for the faults only it can inject (Pause, FastForward, ...).
func (b Backend) Reference() *Server { return b.ref }

// Connect opens a client to b (session timeout 10s, scaled, unless opts
// say otherwise) and closes it when the test ends.
func (b Backend) Connect(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Scale(30*time.Second))
	defer cancel()
	all := []client.Option{client.WithSessionTimeout(Scale(10 * time.Second))}
	if b.tls != nil {
		all = append(all, client.WithTLS(b.tls))
	}
	all = append(append(all, b.opts...), opts...)
	c, err := client.Connect(ctx, b.Servers, all...)
	if err != nil {
		t.Fatalf("zktest: connect to %s: %v", b.Name, err)
	}
	t.Cleanup(c.Close)
	return c
}

// ExpireSession really expires the session on the server, as a timeout
// would, failing the test if it cannot.
func (b Backend) ExpireSession(t testing.TB, s *client.Session) {
	t.Helper()
	if b.ref != nil {
		if !b.ref.ExpireSession(s.ID()) {
			t.Fatalf("zktest: session 0x%x was not alive", s.ID())
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(20*time.Second))
	defer cancel()
	addr := b.Addr()
	if b.plain != "" {
		addr = b.plain
	}
	if err := ExpireSession(ctx, addr, s.ID(), s.Password()); err != nil {
		t.Fatalf("zktest: expire session on %s: %v", b.Name, err)
	}
}

// CutNextCreate makes the next create under dir, by a client opened with
// the returned options, lose its reply after the server applied it.
func (b Backend) CutNextCreate(t testing.TB, dir string) []client.Option {
	t.Helper()
	if b.ref != nil {
		b.ref.DropReplyAfterCommit(func(op, path string) bool {
			return strings.HasPrefix(op, "create") && strings.HasPrefix(path, dir+"/")
		})
		return nil
	}
	if b.tls != nil {
		t.Fatalf("zktest: CutNextCreate cannot cut a create inside TLS on %s (its proxy cannot read the frames): use the reference backend", b.Name)
	}
	p := NewProxy(t, b.Addr())
	p.CutAfterNextCreate(dir + "/")
	return []client.Option{client.WithDialer(p.Dialer())}
}

// Blackhole returns client options whose connections go through a fault
// proxy, and the calls that partition them from the server and heal the
// partition.
func (b Backend) Blackhole(t testing.TB) (opts []client.Option, cut, heal func()) {
	t.Helper()
	p := NewProxy(t, b.Addr())
	return []client.Option{client.WithDialer(p.Dialer())}, p.Blackhole, p.Heal
}
