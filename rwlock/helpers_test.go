package rwlock_test

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }

// backend is a server to run a test against: the shared real ZooKeeper or
// a reference server of the test's own.
type backend struct {
	name    string
	servers []string
	opts    []client.Option
	// expire ends a session on the server, as a timeout would.
	expire func(t *testing.T, s *client.Session)
	// cutNextCreate makes the next create under dir through the returned
	// client options lose its reply after it is applied.
	cutNextCreate func(t *testing.T, dir string) []client.Option
	// blackhole partitions the returned client options' connections from
	// the server until heal is called.
	blackhole func(t *testing.T) (opts []client.Option, cut, heal func())
}

// eachBackend runs f once per available backend, as subtests.
func eachBackend(t *testing.T, f func(t *testing.T, b *backend)) {
	t.Run("zookeeper", func(t *testing.T) { f(t, realBackend(t)) })
	for _, mk := range extraBackends {
		b := mk(t)
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

// extraBackends are the other servers to run against (the reference server).
var extraBackends []func(t *testing.T) *backend

func realBackend(t *testing.T) *backend {
	zk := zktest.SharedZooKeeper(t)
	return &backend{
		name:    "zookeeper",
		servers: zk.Servers(),
		expire: func(t *testing.T, s *client.Session) {
			ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(20*time.Second))
			defer cancel()
			if err := zktest.ExpireSession(ctx, zk.Servers()[0], s.ID(), s.Password()); err != nil {
				t.Fatalf("expire session: %v", err)
			}
		},
		cutNextCreate: func(t *testing.T, dir string) []client.Option {
			p := zktest.NewProxy(t, zk.Servers()[0])
			p.CutAfterNextRequest()
			return []client.Option{proxied(p)}
		},
		blackhole: func(t *testing.T) ([]client.Option, func(), func()) {
			p := zktest.NewProxy(t, zk.Servers()[0])
			return []client.Option{proxied(p)}, p.Blackhole, p.Heal
		},
	}
}

// proxied makes a client dial the proxy whatever server it picks.
func proxied(p *zktest.Proxy) client.Option {
	return client.WithDialer(func(network, _ string, timeout time.Duration) (net.Conn, error) {
		return net.DialTimeout(network, p.Addr(), timeout)
	})
}

// connect opens a client to b and closes it when the test ends.
func (b *backend) connect(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
	defer cancel()
	all := append(append([]client.Option{client.WithSessionTimeout(zktest.Scale(10 * time.Second))}, b.opts...), opts...)
	c, err := client.Connect(ctx, b.servers, all...)
	if err != nil {
		t.Fatalf("connect %s: %v", b.name, err)
	}
	t.Cleanup(c.Close)
	return c
}

// testCtx is a context for one test: generous, scaled.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// lockDir returns a fresh lock path for the test, and makes sure its parent
// exists.
func lockDir(t *testing.T, c *client.Client) string {
	t.Helper()
	p := zktest.UniquePath(t)
	if err := c.EnsurePath(testCtx(t), p); err != nil {
		t.Fatal(err)
	}
	return p + "/lock"
}

// children lists dir's children (none if dir is missing).
func children(t *testing.T, c *client.Client, dir string) []string {
	t.Helper()
	ch, _, err := c.Children(testCtx(t), dir)
	if err != nil && !errors.Is(err, client.ErrNoNode) {
		t.Fatalf("children %s: %v", dir, err)
	}
	return ch
}

// eventually waits until cond holds, polling, or fails the test at the
// deadline with what.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitChildren waits until dir has n children.
func waitChildren(t *testing.T, c *client.Client, dir string, n int) {
	t.Helper()
	var last []string
	eventually(t, "the lock has the expected number of nodes", func() bool {
		last = children(t, c, dir)
		return len(last) == n
	})
}

// within waits for ch or fails the test after a scaled timeout.
func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatalf("timed out waiting for %s", what)
	}
}
