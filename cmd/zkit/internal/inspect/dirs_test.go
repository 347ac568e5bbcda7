package inspect_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/zktest"
)

// A counter shows its value in every encoding its data fits.
func TestCounter(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		for _, tc := range []struct {
			enc  counter.Encoding
			want []inspect.Value
		}{
			{counter.Long, []inspect.Value{{Encoding: "long", Value: 42}}},
			{counter.Int, []inspect.Value{{Encoding: "int", Value: 42}}},
			{counter.Text, []inspect.Value{{Encoding: "text", Value: 42}}},
		} {
			p := recipePath(t, c)
			if _, err := counter.New(c, p, counter.WithEncoding(tc.enc)).Add(ctx, 42); err != nil {
				t.Fatal(err)
			}
			r, err := inspect.Inspect(ctx, c, p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != inspect.Counter || !slices.Equal(r.Values, tc.want) {
				t.Fatalf("%s counter: kind %q values %v, want counter %v", tc.enc, r.Kind, r.Values, tc.want)
			}
		}
		// Deltas left for the writers to apply are listed as waiters,
		// oldest first.
		p := recipePath(t, c)
		if _, err := counter.New(c, p).Add(ctx, 7); err != nil {
			t.Fatal(err)
		}
		var made []string
		for range 2 {
			turn, err := c.Create(ctx, client.JoinPath(p, client.ProtectedName(client.NewProtectedID(), "3-add-")), nil, client.EphemeralSequential)
			if err != nil {
				t.Fatal(err)
			}
			_, name := client.SplitPath(turn)
			made = append(made, name)
		}
		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		waiting := r.With(inspect.Waiter)
		if r.Kind != inspect.Counter || !slices.Equal(r.Values, []inspect.Value{{Encoding: "long", Value: 7}}) ||
			len(waiting) != 2 || waiting[0].Name != made[0] || waiting[1].Name != made[1] {
			t.Fatalf("counter with deltas: kind %q values %v waiting %v, want counter 7 with %v", r.Kind, r.Values, waiting, made)
		}
		// "1234" is a decimal and 4 bytes: both readings are shown.
		p = recipePath(t, c)
		if _, err := c.Create(ctx, p, []byte("1234"), client.Persistent); err != nil {
			t.Fatal(err)
		}
		r, err = inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := []inspect.Value{{Encoding: "int", Value: 0x31323334}, {Encoding: "text", Value: 1234}}; !slices.Equal(r.Values, want) {
			t.Fatalf("values %v, want %v", r.Values, want)
		}
	})
}

// A group shows its members by id, with their payloads and sessions.
func TestGroup(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2 := b.Connect(t), b.Connect(t)
		p := recipePath(t, c1)
		for _, m := range []struct {
			c        *client.Client
			id, data string
		}{{c2, "worker-b", "10.0.0.2:80"}, {c1, "worker-a", "10.0.0.1:80\n"}} {
			if _, err := membership.New(m.c, p).Join(ctx, m.id, []byte(m.data)); err != nil {
				t.Fatal(err)
			}
		}
		r, err := inspect.Inspect(ctx, c1, p)
		if err != nil {
			t.Fatal(err)
		}
		ms := r.With(inspect.Member)
		if r.Kind != inspect.Group || len(ms) != 2 {
			t.Fatalf("kind %q members %+v, want a group of 2", r.Kind, ms)
		}
		if ms[0].Name != "worker-a" || string(ms[0].Data) != "10.0.0.1:80\n" || ms[0].Session != sessionOf(c1) ||
			ms[1].Name != "worker-b" || ms[1].Session != sessionOf(c2) {
			t.Fatalf("members %+v, want worker-a (c1) then worker-b (c2)", ms)
		}
	})
}

// A double barrier shows its members, and whether ready exists.
func TestBarrier(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2 := b.Connect(t), b.Connect(t)
		p := recipePath(t, c1)
		background(t, func(ctx context.Context) { barrier.NewDouble(c1, p, 3).Enter(ctx) })
		background(t, func(ctx context.Context) { barrier.NewDouble(c2, p, 3).Enter(ctx) })
		recipetest.WaitChildren(t, c1, p, 2)
		r, err := inspect.Inspect(ctx, c1, p)
		if err != nil {
			t.Fatal(err)
		}
		ms := r.With(inspect.Member)
		if r.Kind != inspect.Barrier || r.Ready == nil || *r.Ready || len(ms) != 2 || r.Origin != inspect.Zkit {
			t.Fatalf("kind %q ready %v members %+v origin %q, want a zkit barrier of 2 without ready", r.Kind, r.Ready, ms, r.Origin)
		}
		if !slices.Contains(sessions(ms), sessionOf(c1)) || !slices.Contains(sessions(ms), sessionOf(c2)) {
			t.Fatalf("members' sessions %x, want c1's and c2's", sessions(ms))
		}

		// The third member lets everyone in: ready exists.
		if err := barrier.NewDouble(b.Connect(t), p, 3).Enter(ctx); err != nil {
			t.Fatal(err)
		}
		r = inspectUntil(t, c1, p, "ready shows", func(r *inspect.Report) bool { return r.Ready != nil && *r.Ready })
		if len(r.With(inspect.Member)) != 3 {
			t.Fatalf("members %+v, want 3", r.Nodes)
		}
	})
}

// A rendezvous shows its owner and the address in it.
func TestRendezvous(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		p := recipePath(t, c)
		if _, err := rendezvous.New(c, p).PublishEphemeral(ctx, []byte("10.0.0.9:7000")); err != nil {
			t.Fatal(err)
		}
		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		h := r.Held()
		if r.Kind != inspect.Rendezvous || len(h) != 1 || h[0].Session != sessionOf(c) || string(r.Data) != "10.0.0.9:7000" {
			t.Fatalf("kind %q holders %+v data %q, want a rendezvous owned by c holding the address", r.Kind, h, r.Data)
		}
	})
}

// A configuration shows its keys and values, and ready.
func TestConfig(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		p := recipePath(t, c)
		if _, err := configwatch.New(c, p, configwatch.Raw).Set(ctx, configwatch.Values{"workers": []byte("8"), "db": []byte(`"primary"`)}); err != nil {
			t.Fatal(err)
		}
		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		keys := r.With(inspect.Key)
		if r.Kind != inspect.Config || r.Ready == nil || !*r.Ready || len(keys) != 2 ||
			keys[0].Name != "db" || string(keys[0].Data) != `"primary"` || keys[1].Name != "workers" || string(keys[1].Data) != "8" {
			t.Fatalf("kind %q ready %v keys %+v, want config db, workers", r.Kind, r.Ready, keys)
		}
	})
}

// A discovery base and one of its services show their instances.
func TestDiscovery(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := recipePath(t, c)
		d := discovery.New(c, base)
		for _, in := range []discovery.Instance{
			{Name: "api", ID: "a-1", Address: "10.0.0.5", Port: 8080},
			{Name: "api", ID: "a-2", Address: "10.0.0.6", Port: 8080},
			{Name: "db", ID: "d-1", Address: "10.0.0.7", Port: 5432},
		} {
			if _, err := d.Register(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		r, err := inspect.Inspect(ctx, c, base)
		if err != nil {
			t.Fatal(err)
		}
		ins := r.With(inspect.Instance)
		if r.Kind != inspect.Discovery || len(ins) != 3 || ins[0].Name != "api/a-1" || ins[2].Service != "db" || ins[2].ID != "d-1" {
			t.Fatalf("base: kind %q instances %+v, want discovery api/a-1, api/a-2, db/d-1", r.Kind, ins)
		}
		r, err = inspect.Inspect(ctx, c, base+"/api")
		if err != nil {
			t.Fatal(err)
		}
		ins = r.With(inspect.Instance)
		if r.Kind != inspect.Discovery || len(ins) != 2 || ins[1].ID != "a-2" || ins[1].Session != sessionOf(c) {
			t.Fatalf("service: kind %q instances %+v, want discovery a-1, a-2", r.Kind, ins)
		}
	})
}

// A path of no recipe lists its children; a missing one is ErrNoNode; an
// invalid one an input error before anything is sent.
func TestUnknownMissingInvalid(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		p := recipePath(t, c)
		for _, n := range []string{p, p + "/x", p + "/y", p + "/y/z"} {
			if _, err := c.Create(ctx, n, []byte("v"), client.Persistent); err != nil {
				t.Fatal(err)
			}
		}
		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		kids := r.With(inspect.Child)
		if r.Kind != inspect.Unknown || len(kids) != 2 || kids[0].Name != "x" || kids[1].Children != 1 || len(r.Notes) == 0 {
			t.Fatalf("kind %q children %+v notes %q, want unknown x, y (1 child) with a note", r.Kind, kids, r.Notes)
		}
		_, err = inspect.Inspect(ctx, c, p+"/missing")
		if !errors.Is(err, client.ErrNoNode) {
			t.Fatalf("missing path: %v, want ErrNoNode", err)
		}
		var ie *client.InputError
		if _, err := inspect.Inspect(ctx, c, "no/slash"); !errors.As(err, &ie) {
			t.Fatalf("invalid path: %v, want an InputError", err)
		}
	})
}
