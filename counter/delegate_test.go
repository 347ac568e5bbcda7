package counter_test

import (
	"encoding/binary"
	"math"
	"strconv"
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/testing/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// contend runs adds Adds of 1 on each of the clients at once, and checks
// that the counter ends at the total with every value returned once.
func contend(t *testing.T, cs []*client.Client, path string, adds int) {
	t.Helper()
	ctx := recipetest.Context(t)
	var ty tally
	var wg sync.WaitGroup
	for _, c := range cs {
		k := counter.New(c, path)
		wg.Go(func() {
			for range adds {
				ty.add(k.Add(ctx, 1))
			}
		})
	}
	wg.Wait()
	if len(ty.other) > 0 || ty.unknown > 0 {
		t.Fatalf("errors: %v (%d unknown)", ty.other, ty.unknown)
	}
	final, err := counter.New(cs[0], path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ty.check(t, final)
	if final != int64(len(cs)*adds) {
		t.Fatalf("counter = %d, want %d", final, len(cs)*adds)
	}
}

// noChildren waits until the counter's node has no child left.
func noChildren(t *testing.T, c *client.Client, path string) {
	t.Helper()
	ctx := recipetest.Context(t)
	recipetest.Eventually(t, "no delta node left", func() bool {
		kids, _, err := c.Children(ctx, path)
		return err == nil && len(kids) == 0
	})
}

// Sessions whose writes lose leave their deltas, the writers apply them,
// and no delta node is left behind.
func TestDelegation(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		path := counterPath(t)
		var cs []*client.Client
		for range 4 {
			cs = append(cs, b.Connect(t))
		}
		contend(t, cs, path, 100)
		var delegated, applied int64
		for _, c := range cs {
			delegated += counter.Delegated(c, path)
			applied += counter.Applied(c, path)
		}
		if delegated == 0 || applied < delegated {
			t.Fatalf("4 sessions added 400 times: %d batches delegated, %d applied by others", delegated, applied)
		}
		noChildren(t, cs[0], path)
		t.Logf("%d batches delegated, %d deltas applied", delegated, applied)
	})
}

// A delta left by another client is applied after the writer's own calls,
// exactly once, with its result written into its node; one that would
// overflow is left alone.
func TestForeignDelta(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := counterPath(t)
		c, other := b.Connect(t), b.Connect(t)
		k := counter.New(c, path)
		if _, err := k.Add(ctx, 10); err != nil {
			t.Fatal(err)
		}
		leave := func(delta int64) string {
			p, err := other.Create(ctx, client.JoinPath(path, client.ProtectedName(client.NewProtectedID(), strconv.FormatInt(delta, 10)+"-add-")), nil, client.EphemeralSequential)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		five, huge := leave(5), leave(math.MaxInt64)
		k2 := counter.New(other, path) // a fresh engine: it reads the node, and sees the children
		v, err := k2.Add(ctx, 1)
		if err != nil || v != 11 {
			t.Fatalf("Add(1) = %d, %v; want 11: own calls first", v, err)
		}
		d, st := data(t, c, five)
		if st.Version != 1 || len(d) != 8 || binary.BigEndian.Uint64(d) != 16 {
			t.Fatalf("the delta of 5: version %d data %x, want version 1 and 16", st.Version, d)
		}
		if _, st := data(t, c, huge); st.Version != 0 {
			t.Fatalf("a delta that would overflow was applied (version %d)", st.Version)
		}
		if got, err := k.Get(ctx); err != nil || got != 16 {
			t.Fatalf("counter %d, %v; want 16", got, err)
		}
		// Applied once: a later write leaves it alone.
		if v, err := k2.Add(ctx, 1); err != nil || v != 17 {
			t.Fatalf("Add(1) = %d, %v; want 17", v, err)
		}
	})
}

// A delta nobody applies (the other writer is not zkit) is taken back,
// and the batch writes itself.
func TestDelegationTakenBack(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := counterPath(t)
		c, raw := b.Connect(t), b.Connect(t)
		k := counter.New(c, path)
		if err := k.Set(ctx, 0); err != nil {
			t.Fatal(err)
		}
		const rounds = 200
		var wg sync.WaitGroup
		var rawAdds int
		wg.Go(func() { // a naive read-and-write loop, as a client that applies no deltas
			for range rounds {
				for {
					d, st, err := raw.Get(ctx, path)
					if err != nil {
						t.Error(err)
						return
					}
					next := binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(d)+1)
					if _, err := raw.Set(ctx, path, next, st.Version); err == nil {
						rawAdds++
						break
					}
				}
			}
		})
		var ty tally
		for range rounds {
			ty.add(k.Add(ctx, 1))
		}
		wg.Wait()
		if len(ty.other) > 0 || ty.unknown > 0 {
			t.Fatalf("errors: %v (%d unknown)", ty.other, ty.unknown)
		}
		if got, err := k.Get(ctx); err != nil || got != int64(rounds+rawAdds) {
			t.Fatalf("counter %d, %v; want %d", got, err, rounds+rawAdds)
		}
		noChildren(t, c, path)
	})
}

// Where the node's ACL does not let writers create children, nobody can
// leave a delta: conflicts are paced instead.
func TestDelegationRefused(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		path := counterPath(t)
		acl := client.WorldACL(client.PermRead | client.PermWrite | client.PermDelete | client.PermAdmin)
		cs := []*client.Client{b.Connect(t), b.Connect(t), b.Connect(t)}
		if err := counter.New(cs[0], path, counter.WithACL(acl...)).Set(recipetest.Context(t), 0); err != nil {
			t.Fatal(err)
		}
		contend(t, cs, path, 50)
		for _, c := range cs {
			if n := counter.Delegated(c, path); n != 0 {
				t.Fatalf("%d batches delegated in a node nobody may create children in", n)
			}
		}
	})
}
