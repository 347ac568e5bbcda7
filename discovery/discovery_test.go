package discovery_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// Instances are registered, updated and unregistered; the queries and
// Watch show each step, with the data as registered.
func TestRegisterFindUnregister(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		reader := discovery.New(admin, base)
		feed := reader.Watch(ctx, "api")
		awaitSnapshot(t, feed, "")
		if names, err := reader.Services(ctx); err != nil || len(names) != 0 {
			t.Fatalf("Services of a base that does not exist = %v, %v", names, err)
		}

		c1, c2 := b.Connect(t), b.Connect(t)
		in1 := instance("b-1", 1)
		in1.SSLPort = 8443
		in1.Payload = json.RawMessage(`{"zone": "eu"}`)
		in1.URISpec, _ = discovery.ParseURISpec("{scheme}://{address}:{ssl-port}")
		in1.Extra = map[string]json.RawMessage{"weight": json.RawMessage(`3`)}
		before := time.Now().Add(-time.Millisecond)
		r1, err := discovery.New(c1, base).Register(ctx, in1)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := discovery.New(c2, base).Register(ctx, instance("a-2", 2))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := discovery.New(c2, base).Register(ctx, discovery.Instance{Name: "db", ID: "x", Disabled: true}); err != nil {
			t.Fatal(err)
		}
		if r1.Err() != nil || r2.Err() != nil {
			t.Fatalf("registered instances not present: %v, %v", r1.Err(), r2.Err())
		}
		if r1.Node() != base+"/api/b-1" || r1.Instance().Path != r1.Node() {
			t.Fatalf("node %q, instance path %q", r1.Node(), r1.Instance().Path)
		}
		got := awaitSnapshot(t, feed, "a-2@10.0.0.2:8002,b-1@10.0.0.1:8001")
		if names, err := reader.Services(ctx); err != nil || len(names) != 2 || names[0] != "api" || names[1] != "db" {
			t.Fatalf("Services = %v, %v", names, err)
		}
		// What was read is what was registered, the registration time set.
		b1 := got[1]
		if b1.Registered.Before(before) || b1.Registered.After(time.Now()) || !b1.Equal(r1.Instance()) {
			t.Fatalf("read %v\nregistered %v", b1, r1.Instance())
		}
		if b1.Stat.EphemeralOwner != c1.Session().ID() || b1.Stat.Czxid != r1.Token() || b1.Path != r1.Node() {
			t.Fatalf("instance node: owner 0x%x czxid %d path %s", b1.Stat.EphemeralOwner, b1.Stat.Czxid, b1.Path)
		}
		if b1.URI(nil) != "https://10.0.0.1:8443" || string(b1.Extra["weight"]) != "3" {
			t.Fatalf("URI %q, extra %s", b1.URI(nil), b1.Extra)
		}
		one, err := reader.Instance(ctx, "api", "b-1")
		if err != nil || !one.Equal(b1) || one.Stat.Mzxid != b1.Stat.Mzxid {
			t.Fatalf("Instance = %v, %v", one, err)
		}
		db, err := reader.Instances(ctx, "db")
		if err != nil || len(db) != 1 || !db[0].Disabled {
			t.Fatalf("a disabled instance is listed as such: %v, %v", db, err)
		}
		if _, err := reader.Instance(ctx, "api", "nobody"); !errors.Is(err, discovery.ErrNoInstance) {
			t.Fatalf("Instance of an id not registered = %v", err)
		}

		upd := r1.Instance()
		upd.Address, upd.Registered = "10.0.0.9", time.Time{}
		if err := r1.Update(ctx, upd); err != nil {
			t.Fatal(err)
		}
		got = awaitSnapshot(t, feed, "a-2@10.0.0.2:8002,b-1@10.0.0.9:8001")
		if !got[1].Registered.Equal(b1.Registered) || r1.Err() != nil {
			t.Fatalf("Update changed the registration time (%v, was %v) or ended the presence (%v)", got[1].Registered, b1.Registered, r1.Err())
		}

		if err := r2.Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, r2.Done(), "Done after Unregister")
		if !errors.Is(r2.Err(), discovery.ErrReleased) {
			t.Fatalf("Err after Unregister = %v", r2.Err())
		}
		awaitSnapshot(t, feed, "b-1@10.0.0.9:8001")
		if err := r2.Unregister(ctx); err != nil {
			t.Fatalf("second Unregister: %v", err)
		}
		if _, err := r2.Present(ctx); !errors.Is(err, discovery.ErrReleased) {
			t.Fatalf("Present after Unregister = %v", err)
		}
		// Closing the client ends the other registration.
		c1.Close()
		recipetest.Within(t, r1.Done(), "Done after Close")
		if _, err := r1.Present(ctx); !errors.Is(err, client.ErrClosed) {
			t.Fatalf("Present after Close = %v", err)
		}
		awaitSnapshot(t, feed, "")
	})
}

// An id held by another session is a conflict, never overwritten; the
// holder keeps it.
func TestConflictingRegister(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		fc := b.Connect(t)
		first, err := discovery.New(fc, base).Register(ctx, instance("w", 1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = discovery.New(b.Connect(t), base).Register(ctx, instance("w", 2))
		var ce *discovery.ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, discovery.ErrConflict) {
			t.Fatalf("second Register = %v, want a *ConflictError", err)
		}
		if ce.Owner != first.Session().ID() {
			t.Fatalf("conflict names owner 0x%x, want 0x%x", ce.Owner, first.Session().ID())
		}
		if _, err := discovery.New(fc, base).Register(ctx, instance("w", 3)); !errors.Is(err, discovery.ErrConflict) {
			t.Fatalf("second Register on the same client = %v, want ErrConflict", err)
		}
		eventuallyInstances(t, discovery.New(admin, base), "api", "w@10.0.0.1:8001")
		if first.Err() != nil {
			t.Fatalf("first registration disturbed: %v", first.Err())
		}
		// A persistent node (a STATIC instance) in the way is a conflict too.
		if _, err := admin.Create(ctx, base+"/api/s", []byte(`{"name":"api","id":"s","serviceType":"STATIC"}`), client.Persistent); err != nil {
			t.Fatal(err)
		}
		if _, err := discovery.New(b.Connect(t), base).Register(ctx, instance("s", 4)); !errors.Is(err, discovery.ErrConflict) {
			t.Fatalf("Register over a persistent node = %v, want ErrConflict", err)
		}
		got, err := discovery.New(admin, base).Instance(ctx, "api", "s")
		if err != nil || got.Type != discovery.Static || got.Address != "" {
			t.Fatalf("the static instance = %v, %v", got, err)
		}
	})
}

// A node whose data is not an instance is left out of the listings and
// the watch, and is ErrMalformed when asked for.
func TestMalformedInstance(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		d := discovery.New(admin, base)
		if _, err := d.Register(ctx, instance("good", 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Create(ctx, base+"/api/bad", []byte("10.0.0.7:80"), client.Ephemeral); err != nil {
			t.Fatal(err)
		}
		eventuallyInstances(t, d, "api", "good@10.0.0.1:8001")
		awaitSnapshot(t, d.Watch(ctx, "api"), "good@10.0.0.1:8001")
		_, err := d.Instance(ctx, "api", "bad")
		if !errors.Is(err, discovery.ErrMalformed) {
			t.Fatalf("Instance of a malformed node = %v", err)
		}
		recipetest.NamesPath(t, "Instance of a malformed node", err, "instance", base+"/api/bad")
	})
}

// A registration fences writes like every held thing: Token, Guard and
// Multi are its current presence's, refused once its session has expired
// and until it is registered again.
func TestRegistrationFencing(t *testing.T) {
	recipetest.RunKeptFencing(t, func(t *testing.T, c *client.Client, path string, tolerance time.Duration) recipetest.Kept {
		service, id := client.SplitPath(path)
		base, name := client.SplitPath(service)
		r, err := discovery.New(c, base, discovery.WithSuspendTolerance(tolerance)).Register(recipetest.Context(t), discovery.Instance{Name: name, ID: id})
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}

var _ recipetest.Kept = (*discovery.Registration)(nil)

// The recipe's errors are its sentinels, shared with package recipes.
func TestSentinels(t *testing.T) {
	if discovery.ErrLost != recipes.ErrLost || discovery.ErrReleased != recipes.ErrReleased || discovery.ErrConflict != recipes.ErrConflict {
		t.Fatal("sentinels are not package recipes'")
	}
}
