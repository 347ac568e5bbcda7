package election_test

import (
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Observe is level-triggered: leaders that come and go while the
// observer is cut off are not replayed, but once it is back its last
// value is the current leader, and an election left without candidates is
// reported as having no leader.
func TestObserveAcrossPartition(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		// A short session, so that the partition outlives it: the observer
		// comes back under a new session.
		oc := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(2*time.Second)))...)
		first, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		feed := election.New(oc, path, "").Observe(ctx)
		if l := next(t, feed); !same(first, l) {
			t.Fatalf("observed %v, want a", l)
		}
		sess := oc.Session()
		cut()
		pending := campaign(ctx, election.New(b.Connect(t), path, "b"))
		recipetest.WaitChildren(t, admin, path, 2)
		first.Resign(ctx)
		second := elected(t, pending)
		recipetest.Within(t, sess.Done(), "the observer's session loss")
		heal()
		for l := next(t, feed); !same(second, l); l = next(t, feed) {
		}
		second.Resign(ctx)
		if l := next(t, feed); l != election.NoLeader {
			t.Fatalf("observed %v, want no leader", l)
		}
	})
}
