package counter_test

import (
	"encoding/binary"
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

// Sessions that lose writes take turns, and leave no turn node behind.
func TestTurns(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		path := counterPath(t)
		var cs []*client.Client
		for range 4 {
			cs = append(cs, b.Connect(t))
		}
		contend(t, cs, path, 100)
		var turns int64
		for _, c := range cs {
			turns += counter.Turns(c, path)
		}
		if turns == 0 {
			t.Fatal("4 sessions added 400 times without a turn taken")
		}
		ctx := recipetest.Context(t)
		recipetest.Eventually(t, "no turn node left", func() bool {
			kids, _, err := cs[0].Children(ctx, path)
			return err == nil && len(kids) == 0
		})
		t.Logf("%d turns taken", turns)
	})
}

// A turn whose owner never writes (its session alive) slows the line
// down but does not stop it: writers behind it, and the writer that lets
// it go first at every gap, go on without it.
func TestStuckTurn(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := counterPath(t)
		cs := []*client.Client{b.Connect(t), b.Connect(t)}
		if _, err := counter.New(cs[0], path).Add(ctx, 0); err != nil {
			t.Fatal(err)
		}
		stuck := client.JoinPath(path, client.ProtectedName(client.NewProtectedID(), "turn-"))
		if _, err := b.Connect(t).Create(ctx, stuck, nil, client.EphemeralSequential); err != nil {
			t.Fatal(err)
		}
		contend(t, cs, path, 30)
		d, st := data(t, cs[0], path)
		if got := binary.BigEndian.Uint64(d); got != 60 || st.NumChildren != 1 {
			t.Fatalf("counter %d with %d children, want 60 with the stuck turn", got, st.NumChildren)
		}
		t.Logf("%d turns taken", counter.Turns(cs[0], path)+counter.Turns(cs[1], path))
	})
}

// Where the node's ACL does not let writers create children, nobody can
// take a turn: conflicts are paced as they were before turns.
func TestTurnsRefused(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		path := counterPath(t)
		acl := client.WorldACL(client.PermRead | client.PermWrite | client.PermDelete | client.PermAdmin)
		cs := []*client.Client{b.Connect(t), b.Connect(t), b.Connect(t)}
		if err := counter.New(cs[0], path, counter.WithACL(acl...)).Set(recipetest.Context(t), 0); err != nil {
			t.Fatal(err)
		}
		contend(t, cs, path, 50)
		for _, c := range cs {
			if n := counter.Turns(c, path); n != 0 {
				t.Fatalf("%d turns taken in a node nobody may create children in", n)
			}
		}
	})
}
