package election_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Requeue and Campaign called after the session expired on the server,
// before the client noticed: both go on under the next session; another
// candidate leads in between, never two at once.
func TestUnnoticedExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(4*time.Second)))...)
		e := election.New(c, path, "a", election.WithSuspendTolerance(time.Hour))
		first, err := e.Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		other := election.New(b.Connect(t), path, "b")
		otherTerm := make(chan *election.Term, 1)
		go func() {
			term, err := other.Campaign(ctx)
			if err != nil {
				t.Error(err)
			}
			otherTerm <- term
		}()
		recipetest.WaitChildren(t, admin, path, 2)
		old := c.Session()
		cut()
		b.ExpireSession(t, old)
		type res struct {
			term *election.Term
			err  error
		}
		requeued, campaigned := make(chan res, 1), make(chan res, 1)
		go func() {
			term, err := first.Requeue(ctx)
			requeued <- res{term, err}
		}()
		go func() {
			term, err := e.Campaign(ctx)
			campaigned <- res{term, err}
		}()
		bt := termOf(t, otherTerm, "b")
		recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := c.Suspended(); return s })
		heal()
		recipetest.WaitChildren(t, admin, path, 3)
		select {
		case r := <-requeued:
			t.Fatalf("Requeue returned while b leads: %v %v", r.term, r.err)
		case r := <-campaigned:
			t.Fatalf("Campaign returned while b leads: %v %v", r.term, r.err)
		case <-time.After(100 * time.Millisecond):
		}
		if err := bt.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			var r res
			select {
			case r = <-requeued:
			case r = <-campaigned:
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.term.Session().ID() == old.ID() {
				t.Fatal("leads under the expired session")
			}
			if got := recipetest.Children(t, admin, path); len(got) > 2 {
				t.Fatalf("children while leading: %v", got)
			}
			if err := r.term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := first.Err(); !errors.Is(err, election.ErrLost) && !errors.Is(err, election.ErrReleased) {
			t.Fatalf("first term: %v", err)
		}
		recipetest.WaitChildren(t, admin, path, 0)
	})
}
