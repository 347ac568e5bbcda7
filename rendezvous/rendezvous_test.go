package rendezvous_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/zktest"
)

// zrPath returns a fresh rendezvous path for the test (its parent is
// created by Create or PublishEphemeral).
func zrPath(t *testing.T) string { return zktest.UniquePath(t) + "/zr" }

// waitValue receives values from feed until one satisfies ok, and returns
// it; it fails the test at a scaled deadline.
func waitValue(t *testing.T, feed *recipes.Feed[rendezvous.Value], what string, ok func(rendezvous.Value) bool) rendezvous.Value {
	t.Helper()
	deadline := time.After(zktest.Scale(30 * time.Second))
	for {
		select {
		case v, open := <-feed.Values():
			if !open {
				t.Fatalf("feed ended before %s: %v", what, feed.Err())
			}
			if ok(v) {
				return v
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func gone(v rendezvous.Value) bool { return !v.Exists }

func holds(data string) func(rendezvous.Value) bool {
	return func(v rendezvous.Value) bool { return v.Filled() && string(v.Data) == data }
}

type result struct {
	data []byte
	err  error
}

// waitAsync runs Wait in the background.
func waitAsync(ctx context.Context, c *client.Client, path string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		data, err := rendezvous.New(c, path).Wait(ctx)
		ch <- result{data, err}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(zktest.Scale(30 * time.Second)):
		t.Fatal("Wait did not return")
	}
	return result{}
}

// The paper's rendezvous: workers started before the master (and even
// before the launcher) get the master's address once it is published.
func TestWorkerBeforeMaster(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zrPath(t)
		early := waitAsync(ctx, b.Connect(t), path) // before the launcher
		launcher, err := rendezvous.New(b.Connect(t), path).Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		worker := b.Connect(t)
		feed := rendezvous.New(worker, path).Watch(ctx)
		waitValue(t, feed, "the empty zr", func(v rendezvous.Value) bool { return v.Exists && !v.Filled() })
		late := waitAsync(ctx, worker, path) // before the master
		select {
		case r := <-late:
			t.Fatalf("Wait returned %q, %v before the master published", r.data, r.err)
		case <-time.After(zktest.Scale(100 * time.Millisecond)):
		}
		if err := rendezvous.New(b.Connect(t), path).Publish(ctx, []byte("10.0.0.7:7000")); err != nil {
			t.Fatal(err)
		}
		for _, ch := range []<-chan result{early, late} {
			if r := receive(t, ch); r.err != nil || string(r.data) != "10.0.0.7:7000" {
				t.Fatalf("worker got %q, %v", r.data, r.err)
			}
		}
		v := waitValue(t, feed, "the address", holds("10.0.0.7:7000"))
		if v.Stat.Czxid != launcher.Token() {
			t.Fatalf("zr's czxid %d, launcher's token %d", v.Stat.Czxid, launcher.Token())
		}
		if launcher.Err() != nil {
			t.Fatalf("the master's write ended the launcher's hold: %v", launcher.Err())
		}
		// A worker started after the master gets the address at once.
		if data, err := rendezvous.New(b.Connect(t), path).Wait(ctx); err != nil || string(data) != "10.0.0.7:7000" {
			t.Fatalf("late worker got %q, %v", data, err)
		}
	})
}

// The launcher's exit is seen by the master and the workers: Watch shows
// zr gone, a worker still waiting gets ErrGone, and a master publishing
// after it gets ErrGone.
func TestLauncherExitSeen(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zrPath(t)
		lc := b.Connect(t)
		if _, err := rendezvous.New(lc, path).Create(ctx); err != nil {
			t.Fatal(err)
		}
		waiting := waitAsync(ctx, b.Connect(t), path)
		master, worker := b.Connect(t), b.Connect(t)
		mfeed, wfeed := rendezvous.New(master, path).Watch(ctx), rendezvous.New(worker, path).Watch(ctx)
		waitValue(t, wfeed, "zr", func(v rendezvous.Value) bool { return v.Exists })
		waitValue(t, mfeed, "zr", func(v rendezvous.Value) bool { return v.Exists })
		lc.Close() // the launcher process ends
		waitValue(t, mfeed, "zr gone (master)", gone)
		waitValue(t, wfeed, "zr gone (worker)", gone)
		if r := receive(t, waiting); !errors.Is(r.err, rendezvous.ErrGone) {
			t.Fatalf("waiting worker got %q, %v, want ErrGone", r.data, r.err)
		}
		if err := rendezvous.New(master, path).Publish(ctx, []byte("x")); !errors.Is(err, rendezvous.ErrGone) {
			t.Fatalf("Publish after the launcher ended = %v, want ErrGone", err)
		}
	})
}

// The launcher's session expiring ends its hold (Done) and zr for good.
func TestLauncherSessionExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zrPath(t)
		lc := b.Connect(t)
		r, err := rendezvous.New(lc, path, rendezvous.WithSuspendTolerance(time.Hour)).Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		feed := rendezvous.New(b.Connect(t), path).Watch(ctx)
		waitValue(t, feed, "zr", func(v rendezvous.Value) bool { return v.Exists })
		b.ExpireSession(t, r.Session())
		recipetest.Within(t, r.Done(), "the launcher's Done after its session expired")
		if !errors.Is(r.Err(), recipes.ErrLost) || !errors.Is(r.Err(), client.ErrSessionLost) {
			t.Fatalf("launcher's hold ended with %v", r.Err())
		}
		waitValue(t, feed, "zr gone", gone)
		// zr is not created again under the launcher's new session.
		deadline := time.Now().Add(zktest.Scale(300 * time.Millisecond))
		for time.Now().Before(deadline) {
			if ok, _, err := lc.Exists(ctx, path); err == nil && ok {
				t.Fatal("zr was created again after the launcher lost it")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := r.Remove(ctx); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("Remove after the loss = %v", err)
		}
	})
}

// The variant where the master owns zr: a restart of the master is seen
// by the workers (zr gone, then back with a new address and a new czxid),
// and the master's own session expiring re-publishes zr by itself.
func TestMasterRestart(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zrPath(t)
		waiting := waitAsync(ctx, b.Connect(t), path) // a worker before any master
		feed := rendezvous.New(b.Connect(t), path).Watch(ctx)
		m1 := b.Connect(t)
		pub, err := rendezvous.New(m1, path).PublishEphemeral(ctx, []byte("m1:7000"))
		if err != nil {
			t.Fatal(err)
		}
		if r := receive(t, waiting); r.err != nil || string(r.data) != "m1:7000" {
			t.Fatalf("worker got %q, %v", r.data, r.err)
		}
		first := waitValue(t, feed, "the first master's address", holds("m1:7000"))

		// A second master cannot take zr while the first lives.
		if _, err := rendezvous.New(b.Connect(t), path).PublishEphemeral(ctx, []byte("m2:7000")); !errors.Is(err, rendezvous.ErrConflict) {
			t.Fatalf("second master = %v, want ErrConflict", err)
		}

		// The master's session expires: zr comes back by itself.
		old := pub.Presence()
		b.ExpireSession(t, old.Session())
		recipetest.Within(t, old.Done(), "the publication's Done after expiry")
		p, err := pub.Present(ctx)
		if err != nil {
			t.Fatal(err)
		}
		again := waitValue(t, feed, "zr published again", func(v rendezvous.Value) bool {
			return v.Filled() && v.Stat.Czxid == p.Token()
		})
		if string(again.Data) != "m1:7000" || again.Stat.Czxid <= first.Stat.Czxid {
			t.Fatalf("after expiry: %q czxid %d (was %d)", again.Data, again.Stat.Czxid, first.Stat.Czxid)
		}

		// The master process restarts on another address.
		m1.Close()
		waitValue(t, feed, "zr gone with the master", gone)
		pub2, err := rendezvous.New(b.Connect(t), path).PublishEphemeral(ctx, []byte("m1b:7001"))
		if err != nil {
			t.Fatal(err)
		}
		waitValue(t, feed, "the restarted master's address", holds("m1b:7001"))
		if err := pub2.Update(ctx, []byte("m1b:7002")); err != nil {
			t.Fatal(err)
		}
		waitValue(t, feed, "the updated address", holds("m1b:7002"))
		if err := pub2.Remove(ctx); err != nil {
			t.Fatal(err)
		}
		waitValue(t, feed, "zr removed", gone)
	})
}

// zr in the way is a conflict for the launcher, and Remove deletes it.
func TestCreateConflictAndRemove(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zrPath(t)
		c := b.Connect(t)
		r, err := rendezvous.New(c, path).Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rendezvous.New(b.Connect(t), path).Create(ctx); !errors.Is(err, rendezvous.ErrConflict) {
			t.Fatalf("second launcher = %v, want ErrConflict", err)
		}
		if err := r.Remove(ctx); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(r.Err(), recipes.ErrReleased) {
			t.Fatalf("Err after Remove = %v", r.Err())
		}
		if ok, _, err := c.Exists(ctx, path); err != nil || ok {
			t.Fatalf("zr still there after Remove (err %v)", err)
		}
	})
}

// A create whose reply is lost leaves one zr, adopted by the launcher.
func TestLostCreateReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zrPath(t)
		admin := b.Connect(t)
		parent, _ := client.SplitPath(path)
		if err := admin.EnsurePath(ctx, parent); err != nil {
			t.Fatal(err)
		}
		c := b.Connect(t, b.CutNextCreate(t, parent)...)
		r, err := rendezvous.New(c, path).Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ok, st, err := admin.Exists(ctx, path)
		if err != nil || !ok || st.EphemeralOwner != r.Session().ID() {
			t.Fatalf("zr after a lost create reply: exists %v, err %v", ok, err)
		}
		if err := r.Remove(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Bad input is a typed error before anything is sent.
func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		isInput := func(what string, err error) {
			t.Helper()
			var ie *client.InputError
			if !errors.As(err, &ie) || !errors.Is(err, client.ErrInvalidInput) {
				t.Errorf("%s = %v, want an *client.InputError", what, err)
			}
		}
		for _, p := range []string{"", "relative", base + "/", base + "//x", "/", base + "/zr\U0001F600"} {
			_, err := rendezvous.New(c, p).Create(ctx)
			isInput("Create("+p+")", err)
			isInput("Publish("+p+")", rendezvous.New(c, p).Publish(ctx, []byte("x")))
			_, err = rendezvous.New(c, p).PublishEphemeral(ctx, []byte("x"))
			isInput("PublishEphemeral("+p+")", err)
		}
		isInput("Publish(empty)", rendezvous.New(c, base).Publish(ctx, nil))
		_, err := rendezvous.New(c, base).PublishEphemeral(ctx, []byte{})
		isInput("PublishEphemeral(empty)", err)
		isInput("Publish(oversized)", rendezvous.New(c, base).Publish(ctx, make([]byte, client.DefaultMaxBuffer)))
		for _, p := range []string{"relative", "/"} {
			_, err = rendezvous.New(c, p).Wait(ctx)
			isInput("Wait("+p+")", err)
		}
		if ok, _, err := c.Exists(ctx, base); err != nil || ok {
			t.Fatalf("something was created at %s (exists=%v, err=%v)", base, ok, err)
		}
		if !c.Session().Alive() {
			t.Fatal("bad input cost the session")
		}
	})
}
