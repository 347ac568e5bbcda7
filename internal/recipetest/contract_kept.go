package recipetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// Kept is what a recipe built on recipes.Kept holds: a group member, a
// self-published rendezvous node. Its Session, Token, Done, Guard and
// Multi are those of its current presence.
type Kept interface {
	Lease
	Present(ctx context.Context) (*recipes.Presence, error)
}

// KeepFunc makes a Kept at path on c, with the recipe's suspend tolerance
// set to tolerance, failing the test if it cannot.
type KeepFunc func(t *testing.T, c *client.Client, path string, tolerance time.Duration) Kept

// RunKeptFencing checks on both servers (zktest.EachBackend) that writes
// through a Kept are fenced by its presence: its Token is its node's
// czxid, and Multi (or a Multi carrying Guard) applies while it is
// present. Its client is then cut off and its session expired: Done is
// closed and Multi refuses the write with an error matching
// recipes.ErrLost and client.ErrSessionLost, for as long as the Kept is
// not present again. Once healed it is present under a new session, with
// a higher token, and Multi applies again. No refused write reaches the
// server.
func RunKeptFencing(t *testing.T, keep KeepFunc) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := Context(t)
		admin := b.Connect(t)
		dir := zktest.UniquePath(t)
		target := dir + "-fenced"
		if err := admin.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Create(ctx, target, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		write := func(data string) client.Op { return client.SetOp(target, []byte(data), -1) }

		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(2*time.Second)))...)
		// Tolerant of suspension, so that the presence ends with the
		// expiry itself, not the disconnection that comes with it.
		k := keep(t, c, dir+"/kept", time.Hour)
		ok, st, err := admin.Exists(ctx, k.Node())
		if err != nil || !ok || st.Czxid != k.Token() || st.EphemeralOwner != k.Session().ID() {
			t.Fatalf("node %s (exists %v, err %v): Token and Session are not its czxid and owner", k.Node(), ok, err)
		}
		if _, err := k.Multi(ctx, write("present")); err != nil {
			t.Fatalf("fenced write while present: %v", err)
		}
		if _, err := c.Multi(ctx, k.Guard(), write("guarded")); err != nil {
			t.Fatalf("write carrying Guard while present: %v", err)
		}

		old, done := k.Token(), k.Done()
		cut()
		b.ExpireSession(t, k.Session())
		Within(t, done, "Done after the session expired")
		_, err = k.Multi(ctx, write("stale"))
		if !errors.Is(err, recipes.ErrLost) || !errors.Is(err, client.ErrSessionLost) {
			t.Fatalf("fenced write after the session expired = %v, want ErrLost and ErrSessionLost", err)
		}

		heal()
		p, err := k.Present(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p.Token() <= old || k.Token() != p.Token() || k.Session() != p.Session() {
			t.Fatalf("present again with token %d (Token %d), was %d", p.Token(), k.Token(), old)
		}
		if _, err := k.Multi(ctx, write("again")); err != nil {
			t.Fatalf("fenced write when present again: %v", err)
		}
		data, st, err := admin.Get(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != "again" || st.Version != 3 {
			t.Fatalf("fenced node holds %q at version %d, want the 3 writes made while present", data, st.Version)
		}
	})
}

// KeepCall is a recipe's call that keeps a node under dir on c (Join,
// Register, Create, PublishEphemeral) and returns once it is present;
// it releases what it got before returning nil.
type KeepCall func(ctx context.Context, c *client.Client, dir string) error

// RunKeptCancelAfterLostCreate checks on both servers (zktest.EachBackend)
// that a keeping call whose create was applied but lost its reply, and
// whose context ends while the client reconnects (the call waiting to
// claim the node), returns ctx's error and leaves no node: the node its
// session owns is deleted once the client is connected again, long before
// the session ends. node is the kept node's path relative to dir.
func RunKeptCancelAfterLostCreate(t *testing.T, node string, keep KeepCall) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := Context(t)
		admin := b.Connect(t)
		dir := zktest.UniquePath(t)
		if err := admin.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		path := dir + "/" + node
		proxy := zktest.NewProxy(t, b.Addr())
		proxy.CutAfterCreateOf(path)
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		sub := c.Subscribe()
		defer sub.Close()
		// Slow enough that the client is still reconnecting when the
		// call is cancelled.
		proxy.SetLatency(zktest.Scale(300 * time.Millisecond))

		kctx, cancel := context.WithCancel(ctx)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- keep(kctx, c, dir) }()
		if !WaitEventFor(t, sub, zktest.Scale(10*time.Second), func(ev client.Event) bool {
			return ev.State == client.StateSuspended
		}) {
			t.Fatal("the create never lost its reply")
		}
		// The call has seen its create cut off and waits for the
		// connection to claim the node.
		time.Sleep(zktest.Scale(50 * time.Millisecond))
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled after a lost create reply: %v, want context.Canceled", err)
			}
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("the call did not return once cancelled")
		}
		if ok, st, err := admin.Exists(ctx, path); err != nil || !ok || st.EphemeralOwner != c.Session().ID() {
			t.Fatalf("the cut create was not applied under the client's session (exists %v, err %v)", ok, err)
		}
		proxy.SetLatency(0)
		Eventually(t, path+" deleted", func() bool {
			ok, _, err := admin.Exists(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			return !ok
		})
	})
}
