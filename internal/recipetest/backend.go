package recipetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Backend is a server to run a test against: the shared real ZooKeeper
// ("zookeeper") or a reference server of the test's own ("refserver").
type Backend struct {
	zktest.Backend // Name and Servers

	ref *zktest.Server // the reference server; nil for real ZooKeeper
}

// EachBackend runs f once per backend, as subtests named after them: the
// test binary's shared real ZooKeeper (skipped when none is installed,
// failed with ZKIT_REQUIRE_ZOOKEEPER=1), then a fresh reference server.
func EachBackend(t *testing.T, f func(t *testing.T, b *Backend)) {
	t.Run("zookeeper", func(t *testing.T) { f(t, realBackend(t)) })
	b := refBackend(t)
	t.Run(b.Name, func(t *testing.T) { f(t, b) })
}

func realBackend(t *testing.T) *Backend {
	zk := zktest.SharedZooKeeper(t)
	return &Backend{Backend: zktest.Backend{Name: "zookeeper", Servers: zk.Servers()}}
}

// refBackend is a reference server of the test's own.
func refBackend(t *testing.T) *Backend {
	s := zktest.NewServer(t)
	return &Backend{Backend: zktest.Backend{Name: "refserver", Servers: s.Servers()}, ref: s}
}

// Expire ends a session on the server, as a timeout would.
func (b *Backend) Expire(t *testing.T, s *client.Session) {
	t.Helper()
	if b.ref == nil {
		b.Backend.ExpireSession(t, s.ID(), s.Password())
		return
	}
	if !b.ref.ExpireSession(s.ID()) {
		t.Fatalf("session 0x%x was not alive", s.ID())
	}
}

// CutNextCreate makes the next create under dir through the returned client
// options lose its reply after it is applied.
func (b *Backend) CutNextCreate(t *testing.T, dir string) []client.Option {
	t.Helper()
	if b.ref != nil {
		b.ref.DropReplyAfterCommit(func(op, path string) bool {
			return strings.HasPrefix(op, "create") && strings.HasPrefix(path, dir+"/")
		})
		return nil
	}
	p := zktest.NewProxy(t, b.Addr())
	p.CutAfterNextRequest()
	return []client.Option{client.WithDialer(p.Dialer())}
}

// Blackhole partitions the returned client options' connections from the
// server between cut and heal.
func (b *Backend) Blackhole(t *testing.T) (opts []client.Option, cut, heal func()) {
	t.Helper()
	p := zktest.NewProxy(t, b.Addr())
	return []client.Option{client.WithDialer(p.Dialer())}, p.Blackhole, p.Heal
}

// Connect opens a client to b (session timeout 10s, scaled, unless opts say
// otherwise) and closes it when the test ends.
func (b *Backend) Connect(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
	defer cancel()
	all := append([]client.Option{client.WithSessionTimeout(zktest.Scale(10 * time.Second))}, opts...)
	c, err := client.Connect(ctx, b.Servers, all...)
	if err != nil {
		t.Fatalf("connect %s: %v", b.Name, err)
	}
	t.Cleanup(c.Close)
	return c
}
