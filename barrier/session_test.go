package barrier_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Enter called after the session expired on the server, before the
// client noticed (its connection is silent): it held nothing yet, so it
// goes on under the next session, as it does when called just after the
// client noticed (TestEnterAfterSessionLoss).
func TestEnterAfterUnnoticedExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(4*time.Second)))...)
		old := c.Session()
		cut()
		b.ExpireSession(t, old)
		d := barrier.NewDouble(c, path, 1)
		entered := make(chan error, 1)
		go func() { entered <- d.Enter(ctx) }()
		recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := c.Suspended(); return s })
		heal()
		if err := recv(t, entered, "Enter"); err != nil {
			t.Fatalf("Enter after an unnoticed expiry: %v, want it to go on under the next session", err)
		}
		if err := d.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		waitMembers(t, admin, path, 0)
	})
}

// A member whose client gave its session up while the server still had it
// (the server's session timers were reset, as a restart or a leader
// election does), while it waited in Enter for the others: it was not
// inside yet, so its Enter goes on under the next session, and its old
// node stays until it is deleted under that session or the server expires
// the old one. Its new node must not be counted beside the old one: the
// member would pass a barrier for two alone.
func TestEnterAgainWhileOldNodeLingers(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	ref := b.Reference()
	ctx := recipetest.Context(t)
	admin := b.Connect(t)
	path := barrierPath(t, admin)
	timeout := zktest.Scale(2 * time.Second)
	p := zktest.NewProxy(t, b.Addr())
	c := b.Connect(t, client.WithDialer(p.Dialer()), client.WithSessionTimeout(timeout))
	d := barrier.NewDouble(c, path, 2)
	again := make(chan error, 1)
	go func() { again <- d.Enter(ctx) }()
	waitMembers(t, admin, path, 1)
	old := recipetest.GiveUpSession(t, ref, p, c, timeout)
	p.Heal()
	// Until the old node is deleted (under the next session, or by the
	// server's expiry of the old one, within its timeout), it is there
	// beside the new one.
	select {
	case err := <-again:
		if slices.Contains(ref.Sessions(), old.ID()) {
			t.Fatalf("Enter returned (%v) with one live member, counting the node of its lost session", err)
		}
		t.Fatalf("Enter returned (%v) with one live member", err)
	case <-time.After(timeout + zktest.Scale(time.Second)):
	}
	waitMembers(t, admin, path, 1)
	secondMember(t, ctx, b, admin, path, d, again)
}

// An Enter given up while the connection is down leaves the delete of its
// node to the background, which retries at its own pace. An Enter made
// again at once must not count that node beside its new one once the
// connection is back: the member would pass a barrier for two alone.
func TestEnterAgainAfterCancelWhileSuspended(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, opts...)
		d := barrier.NewDouble(c, path, 2)
		firstCtx, cancelFirst := context.WithCancel(ctx)
		first := make(chan error, 1)
		go func() { first <- d.Enter(firstCtx) }()
		waitMembers(t, admin, path, 1)
		cut()
		recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := c.Suspended(); return s })
		cancelFirst()
		if err := recv(t, first, "the cancelled Enter"); !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled Enter: %v", err)
		}
		// Let the background delete back off for a while.
		time.Sleep(zktest.Scale(2 * time.Second))
		again := make(chan error, 1)
		go func() { again <- d.Enter(ctx) }()
		heal()
		quiet(t, again, "Enter again with one live member")
		waitMembers(t, admin, path, 1)
		secondMember(t, ctx, b, admin, path, d, again)
	})
}

// secondMember completes d's barrier for two, whose Enter again is under
// way: a member on a client of its own enters, d's Enter returns, and both
// leave.
func secondMember(t *testing.T, ctx context.Context, b zktest.Backend, admin *client.Client, path string, d *barrier.Double, again <-chan error) {
	t.Helper()
	other := barrier.NewDouble(b.Connect(t), path, 2)
	if err := other.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, again, "Enter again"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*barrier.Double{d, other} {
		go m.Leave(ctx)
	}
	waitMembers(t, admin, path, 0)
}
