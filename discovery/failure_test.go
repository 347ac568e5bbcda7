package discovery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// After the session expires the instance is not present (Done) and gone
// from the registry, then registered again under the new session with the
// data of an Update made in between; a watcher sees the new node.
func TestSessionExpiryReregisters(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		reader := discovery.New(admin, base)
		feed := reader.Watch(ctx, "api")
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, opts...)
		r, err := discovery.New(c, base, discovery.WithSuspendTolerance(time.Hour)).Register(ctx, instance("w", 1))
		if err != nil {
			t.Fatal(err)
		}
		first := awaitSnapshot(t, feed, "w@10.0.0.1:8001")
		before := r.Presence()
		done := r.Done()

		// Cut off, so that it cannot register again before the registry
		// has shown the instance gone.
		cut()
		b.ExpireSession(t, before.Session())
		awaitSnapshot(t, feed, "")
		if got, err := reader.Instances(ctx, "api"); err != nil || len(got) != 0 {
			t.Fatalf("Instances after the expiry = %q, %v", show(got), err)
		}
		heal()
		recipetest.Within(t, done, "Done after the session expired")
		if err := before.Err(); !errors.Is(err, discovery.ErrLost) || !errors.Is(err, client.ErrSessionLost) {
			t.Fatalf("presence ended with %v, want session lost", err)
		}
		// Written at once, or when the node is created again.
		upd := r.Instance()
		upd.Address = "10.0.0.9"
		if err := r.Update(ctx, upd); err != nil {
			t.Fatalf("Update after the expiry: %v", err)
		}
		p, err := r.Present(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p.Session().ID() == before.Session().ID() || p.Token() <= before.Token() {
			t.Fatalf("new presence: session 0x%x token %d, old 0x%x token %d",
				p.Session().ID(), p.Token(), before.Session().ID(), before.Token())
		}
		again := awaitSnapshot(t, feed, "w@10.0.0.9:8001")
		if again[0].Stat.EphemeralOwner != c.Session().ID() || again[0].Stat.Czxid != p.Token() ||
			!again[0].Registered.Equal(first[0].Registered) {
			t.Fatalf("registered again: owner 0x%x czxid %d registered %v (was %v)",
				again[0].Stat.EphemeralOwner, again[0].Stat.Czxid, again[0].Registered, first[0].Registered)
		}
		if err := r.Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		awaitSnapshot(t, feed, "")
	})
}

// Disconnected beyond the tolerance, the instance is not present (no
// stale self); back on the same session, it adopts its node again.
func TestSuspensionEndsPresence(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(6*time.Second)))...)
		r, err := discovery.New(c, base).Register(ctx, instance("strict", 1))
		if err != nil {
			t.Fatal(err)
		}
		before := r.Presence()
		cut()
		recipetest.Within(t, before.Done(), "Done after the connection was suspended")
		if !errors.Is(before.Err(), discovery.ErrSuspended) || r.Err() == nil {
			t.Fatalf("presence ended with %v (Err %v), want ErrSuspended", before.Err(), r.Err())
		}
		heal()
		p, err := r.Present(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p == before || p.Token() != before.Token() || p.Session() != before.Session() {
			t.Fatal("after the reconnect the node was not adopted as it was")
		}
		eventuallyInstances(t, discovery.New(admin, base), "api", "strict@10.0.0.1:8001")
	})
}

// A create of the instance's node whose reply is lost leaves one node,
// adopted as the registration's.
func TestLostCreateReplyOnInstance(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		c, cutFired := recipetest.LostCreateOf(t, b, base+"/api/w")
		r, err := discovery.New(c, base).Register(ctx, instance("w", 1))
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.Present(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := eventuallyInstances(t, discovery.New(admin, base), "api", "w@10.0.0.1:8001")
		if got[0].Stat.EphemeralOwner != p.Session().ID() || got[0].Stat.Czxid != p.Token() {
			t.Fatalf("after a lost create reply: owner 0x%x czxid %d", got[0].Stat.EphemeralOwner, got[0].Stat.Czxid)
		}
		if !cutFired() {
			t.Fatal("the create's reply was never cut")
		}
		if err := r.Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		eventuallyInstances(t, discovery.New(admin, base), "api", "")
	})
}

// A Register cancelled while it waits to claim the instance's node, whose
// create was applied but lost its reply, leaves no node.
func TestCancelAfterLostCreateReply(t *testing.T) {
	recipetest.RunKeptCancelAfterLostCreate(t, "api/w", func(ctx context.Context, c *client.Client, dir string) error {
		r, err := discovery.New(c, dir).Register(ctx, instance("w", 1))
		if err != nil {
			return err
		}
		return r.Unregister(ctx)
	})
}

// A create of the service's node whose reply is lost is ridden out: the
// instance is registered under the one service node.
func TestLostCreateReplyOnService(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		if err := admin.EnsurePath(ctx, base); err != nil {
			t.Fatal(err)
		}
		c, cutFired := recipetest.LostCreateOf(t, b, base+"/api")
		r, err := discovery.New(c, base).Register(ctx, instance("w", 1))
		if err != nil {
			t.Fatal(err)
		}
		if !cutFired() {
			t.Fatal("the service node's create reply was never cut")
		}
		if _, err := r.Present(ctx); err != nil {
			t.Fatal(err)
		}
		eventuallyInstances(t, discovery.New(admin, base), "api", "w@10.0.0.1:8001")
		if names, err := discovery.New(admin, base).Services(ctx); err != nil || len(names) != 1 || names[0] != "api" {
			t.Fatalf("Services = %v, %v", names, err)
		}
	})
}

// A Register cancelled before it is done leaves nothing behind; a Pick and
// a Watch end with their context.
func TestCancellation(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		admin := b.Connect(t)
		base := basePath(t, admin)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		c := b.Connect(t)
		if _, err := discovery.New(c, base).Register(cancelled, instance("w", 1)); !errors.Is(err, context.Canceled) {
			t.Fatalf("Register with a cancelled context = %v", err)
		}
		if ok, _, err := admin.Exists(recipetest.Context(t), base); err != nil || ok {
			t.Fatalf("the cancelled Register created %s (%v, %v)", base, ok, err)
		}

		// Cut off from the server, Register waits for a session within its
		// context, and gives up with it; nothing reaches the server.
		opts, cut, heal := b.Blackhole(t)
		cc := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(6*time.Second)))...)
		d := discovery.New(cc, base)
		p := d.Provider(recipetest.Context(t), "api")
		cut()
		short, cancelShort := context.WithTimeout(context.Background(), zktest.Scale(300*time.Millisecond))
		defer cancelShort()
		if _, err := d.Register(short, instance("late", 2)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Register while cut off = %v, want the context's deadline", err)
		}
		if _, err := p.Pick(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Pick before a first view = %v, want the context's deadline", err)
		}
		heal()
		ctx := recipetest.Context(t)
		if _, err := d.Register(ctx, instance("next", 3)); err != nil {
			t.Fatal(err)
		}
		// Requests of one client are served in order: the cancelled one
		// would be there by now.
		eventuallyInstances(t, discovery.New(admin, base), "api", "next@10.0.0.3:8003")
		eventuallyPicks(t, p, "next")

		wctx, stop := context.WithCancel(ctx)
		feed := d.Watch(wctx, "api")
		<-feed.Values()
		stop()
		for range feed.Values() {
		}
		if !errors.Is(feed.Err(), context.Canceled) {
			t.Fatalf("Watch ended with %v, want context.Canceled", feed.Err())
		}
		pctx, stopProvider := context.WithCancel(ctx)
		p2 := d.Provider(pctx, "api")
		if _, err := p2.Pick(ctx); err != nil {
			t.Fatal(err)
		}
		stopProvider()
		recipetest.Within(t, p2.Done(), "the provider's Done after its context ended")
		if _, err := p2.Pick(ctx); !errors.Is(err, context.Canceled) || !errors.Is(p2.Err(), context.Canceled) {
			t.Fatalf("Pick after the provider's context ended = %v (Err %v)", err, p2.Err())
		}
	})
}

// Bad input is a typed error before anything is sent.
func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		big := instance("big", 1)
		big.Payload = append(append([]byte(`"`), make([]byte, client.DefaultMaxBuffer)...), '"')
		for i := range big.Payload[1 : len(big.Payload)-1] {
			big.Payload[i+1] = 'x'
		}
		withType := func(t discovery.ServiceType) discovery.Instance { i := instance("t", 1); i.Type = t; return i }
		cases := []struct {
			what string
			base string
			inst discovery.Instance
		}{
			{"empty service name", base, discovery.Instance{ID: "w"}},
			{"empty id", base, discovery.Instance{Name: "api"}},
			{"id with /", base, discovery.Instance{Name: "api", ID: "a/b"}},
			{"service name with /", base, discovery.Instance{Name: "a/b", ID: "w"}},
			{"id ..", base, discovery.Instance{Name: "api", ID: ".."}},
			{"id with a NUL", base, discovery.Instance{Name: "api", ID: "bad\x00id"}},
			{"id outside the BMP", base, discovery.Instance{Name: "api", ID: "w\U0001F600"}},
			{"relative base", "relative", instance("w", 1)},
			{"base with a trailing /", base + "/", instance("w", 1)},
			{"JSON over the limit", base, big},
			{"static type", base, withType(discovery.Static)},
			{"sequential type", base, withType(discovery.DynamicSequential)},
			{"negative port", base, discovery.Instance{Name: "api", ID: "w", Port: -1}},
			{"SSL port over 65535", base, discovery.Instance{Name: "api", ID: "w", SSLPort: 70000}},
			{"payload not JSON", base, discovery.Instance{Name: "api", ID: "w", Payload: []byte("{oops")}},
			{"extra member named name", base, discovery.Instance{Name: "api", ID: "w", Extra: map[string]json.RawMessage{"name": []byte(`"x"`)}}},
		}
		for _, tc := range cases {
			_, err := discovery.New(c, tc.base).Register(ctx, tc.inst)
			var ie *client.InputError
			if !errors.As(err, &ie) || !errors.Is(err, client.ErrInvalidInput) {
				t.Errorf("Register with %s = %v, want an *client.InputError", tc.what, err)
			}
			if err := discovery.CheckInstance(tc.base, tc.inst); !errors.Is(err, client.ErrInvalidInput) {
				t.Errorf("CheckInstance with %s = %v", tc.what, err)
			}
		}
		d := discovery.New(c, base)
		if _, err := discovery.New(c, "relative").Services(ctx); !errors.Is(err, client.ErrInvalidInput) {
			t.Errorf("Services(relative) = %v", err)
		}
		for _, name := range []string{"", "a/b", "."} {
			if _, err := d.Instances(ctx, name); !errors.Is(err, client.ErrInvalidInput) {
				t.Errorf("Instances(%q) = %v", name, err)
			}
			if _, err := d.Instance(ctx, "api", name); !errors.Is(err, client.ErrInvalidInput) {
				t.Errorf("Instance(api, %q) = %v", name, err)
			}
			feed := d.Watch(ctx, name)
			for range feed.Values() {
				t.Errorf("a snapshot for service %q", name)
			}
			if !errors.Is(feed.Err(), client.ErrInvalidInput) {
				t.Errorf("Watch(%q) ended with %v", name, feed.Err())
			}
			if _, err := d.Provider(ctx, name).Pick(ctx); !errors.Is(err, client.ErrInvalidInput) {
				t.Errorf("Provider(%q).Pick = %v", name, err)
			}
		}
		if ok, _, err := c.Exists(ctx, base); err != nil || ok {
			t.Fatalf("something was created under %s (exists=%v, err=%v)", base, ok, err)
		}
		r, err := d.Register(ctx, instance("ok", 1))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Update(ctx, big); !errors.Is(err, client.ErrInvalidInput) {
			t.Errorf("Update with oversized JSON = %v", err)
		}
		if err := r.Update(ctx, instance("other", 1)); !errors.Is(err, client.ErrInvalidInput) {
			t.Errorf("Update to another id = %v", err)
		}
		if got := r.Instance(); got.ID != "ok" || got.Address != "10.0.0.1" {
			t.Errorf("refused Updates changed the instance: %v", got)
		}
		if !c.Session().Alive() || r.Err() != nil {
			t.Fatal("bad input cost the session or the registration")
		}
	})
}

// Every error names the call's path once (and the call, unless it is the
// error of a client call on that path); on a closed client every call
// fails with client.ErrClosed.
func TestErrorsNamePathOnce(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		c := b.Connect(t)
		d := discovery.New(c, base)
		r, err := d.Register(ctx, instance("w", 1))
		if err != nil {
			t.Fatal(err)
		}
		node := r.Node()

		_, err = discovery.New(b.Connect(t), base).Register(ctx, instance("w", 1))
		recipetest.NamesPath(t, "Register of a taken id", err, "", node)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = d.Register(cancelled, instance("v", 1))
		recipetest.NamesPath(t, "Register with a cancelled context", err, "", base+"/api/v")
		_, err = d.Instances(cancelled, "api")
		recipetest.NamesPath(t, "Instances with a cancelled context", err, "", base+"/api")
		_, err = d.Services(cancelled)
		recipetest.NamesPath(t, "Services with a cancelled context", err, "", base)
		_, err = d.Instance(ctx, "api", "nobody")
		recipetest.NamesPath(t, "Instance of no instance", err, "instance", base+"/api/nobody")
		_, err = d.Provider(ctx, "none").Pick(ctx)
		if !errors.Is(err, discovery.ErrNoInstance) {
			t.Errorf("Pick of a service without instances = %v", err)
		}
		recipetest.NamesPath(t, "Pick of a service without instances", err, "pick", base+"/none")

		// A foreign write: the registration stops with a conflict.
		if _, err := admin.Set(ctx, node, []byte(`{"name":"api","id":"w"}`), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, r.Done(), "Done after a foreign write")
		if !errors.Is(r.Err(), discovery.ErrConflict) {
			t.Fatalf("Err after a foreign write = %v", r.Err())
		}
		_, err = r.Present(ctx)
		recipetest.NamesPath(t, "Present after a conflict", err, "", node)
		recipetest.NamesPath(t, "Update after a conflict", r.Update(ctx, instance("w", 1)), "", node)
		_, err = r.Multi(ctx, client.CheckOp(base, -1))
		recipetest.NamesPath(t, "Multi after a conflict", err, "", node)
		recipetest.NamesPath(t, "Unregister after a conflict", r.Unregister(ctx), "", node)

		gone, err := d.Register(ctx, instance("gone", 1))
		if err != nil {
			t.Fatal(err)
		}
		gone.Unregister(ctx)
		_, err = gone.Present(ctx)
		recipetest.NamesPath(t, "Present after Unregister", err, "present", gone.Node())
		_, err = gone.Multi(ctx, client.CheckOp(base, -1))
		recipetest.NamesPath(t, "Multi after Unregister", err, "multi", gone.Node())

		// The client closed.
		kept, err := d.Register(ctx, instance("kept", 1))
		if err != nil {
			t.Fatal(err)
		}
		feed := d.Watch(ctx, "api")
		<-feed.Values()
		p := d.Provider(ctx, "api")
		if _, err := p.Pick(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
		closed := func(what string, err error, op, path string) {
			t.Helper()
			if !errors.Is(err, client.ErrClosed) {
				t.Errorf("%s on a closed client = %v, want client.ErrClosed", what, err)
			}
			recipetest.NamesPath(t, what+" on a closed client", err, op, path)
		}
		_, err = d.Register(ctx, instance("late", 1))
		closed("Register", err, "", base+"/api/late")
		_, err = d.Services(ctx)
		closed("Services", err, "", base)
		_, err = d.Instances(ctx, "api")
		closed("Instances", err, "", base+"/api")
		_, err = d.Instance(ctx, "api", "kept")
		closed("Instance", err, "", base+"/api/kept")
		_, err = kept.Present(ctx)
		closed("Present", err, "present", kept.Node())
		_, err = kept.Multi(ctx, client.CheckOp(base, -1))
		closed("Multi", err, "multi", kept.Node())
		closed("Update", kept.Update(ctx, instance("kept", 2)), "", kept.Node())
		closed("Unregister", kept.Unregister(ctx), "", kept.Node())
		for range feed.Values() {
		}
		if !errors.Is(feed.Err(), client.ErrClosed) {
			t.Errorf("Watch on a closed client ended with %v, want client.ErrClosed", feed.Err())
		}
		recipetest.Within(t, p.Done(), "the provider's Done after Close")
		_, err = p.Pick(ctx)
		closed("Pick", err, "", base+"/api")
	})
}

// A registration's calls made right after the client's Close fail with
// client.ErrClosed: the registration sees the close in a goroutine of its
// own, and the calls wait for it rather than act on a presence about to
// end.
func TestCallsRightAfterClose(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		base := basePath(t, b.Connect(t))
		c := b.Connect(t)
		regs := make([]*discovery.Registration, 64)
		for i := range regs {
			r, err := discovery.New(c, base).Register(ctx, instance(fmt.Sprintf("w%02d", i), 1))
			if err != nil {
				t.Fatal(err)
			}
			regs[i] = r
		}
		c.Close()
		for i, r := range regs {
			var err error
			switch i % 4 {
			case 0:
				_, err = r.Present(ctx)
			case 1:
				_, err = r.Multi(ctx, client.CheckOp(base, -1))
			case 2:
				err = r.Update(ctx, r.Instance())
			case 3:
				err = r.Unregister(ctx)
			}
			if !errors.Is(err, client.ErrClosed) {
				t.Errorf("call %d on %s right after Close = %v, want client.ErrClosed", i%4, r.Node(), err)
			}
		}
	})
}
