package election_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// zkit candidates and Curator LeaderLatch candidates alternate in one
// election: each kind takes over from the other, in queue order, and in
// particular a LeaderLatch right behind a resigning or requeueing zkit
// leader leads (it reacts to NodeDeleted only, so zkit resigns with a
// plain delete, alone or in Requeue's transaction). zkit's Participants
// and Curator's getParticipants list both kinds, in the same order.
func TestCuratorInterop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		java := recipetest.StartLeaderLatch(t, b.Servers)
		observer := election.New(admin, path, "")
		leader := func() string {
			t.Helper()
			l, err := observer.Leader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return l.ID
		}

		// Queue: zkit a, Curator j1, zkit b, Curator j2.
		a, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		java.Send("j1 start %s", path)
		recipetest.WaitChildren(t, admin, path, 2)
		pendingB := campaign(ctx, election.New(b.Connect(t), path, "b"))
		recipetest.WaitChildren(t, admin, path, 3)
		java.Send("j2 start %s", path)
		recipetest.WaitChildren(t, admin, path, 4)
		java.Send("j1 leader")
		java.Expect("j1 sees a") // Curator reads zkit's node data as the id
		java.Send("j1 has")
		java.Expect("j1 has false")
		participants := func(want string) {
			t.Helper()
			if got := lineOf(participantsOf(t, observer)); got != want {
				t.Fatalf("zkit lists the participants %q, want %q", got, want)
			}
			java.Send("j2 participants")
			java.Expect("j2 participants " + want)
		}
		participants("a* j1 b j2")

		// zkit resigns: the LeaderLatch right behind it leads.
		if err := a.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		java.Expect("j1 leader")
		notElected(t, pendingB)
		if got := leader(); got != "j1" {
			t.Fatalf("Leader() = %q while j1 leads", got)
		}
		participants("j1* b j2")

		// Curator resigns (close: a plain delete): zkit's candidate leads.
		java.Send("j1 close")
		java.Expect("j1 closed")
		bTerm := elected(t, pendingB)
		java.Send("j2 has")
		java.Expect("j2 has false")
		if got := leader(); got != "b" {
			t.Fatalf("Leader() = %q while b leads", got)
		}

		// And once more each way.
		pendingC := campaign(ctx, election.New(b.Connect(t), path, "c"))
		recipetest.WaitChildren(t, admin, path, 3)
		bTerm.Resign(ctx)
		java.Expect("j2 leader")
		notElected(t, pendingC)
		java.Send("j2 close")
		java.Expect("j2 closed")
		cTerm := elected(t, pendingC)

		// zkit requeues (its delete goes in one transaction with its next
		// create): the LeaderLatch right behind it leads, and zkit's next
		// candidacy waits behind the LeaderLatch.
		java.Send("j3 start %s", path)
		recipetest.WaitChildren(t, admin, path, 2)
		requeued := campaignWith(func() (*election.Term, error) { return cTerm.Requeue(ctx) }, "c")
		java.Expect("j3 leader")
		notElected(t, requeued)
		if got := leader(); got != "j3" {
			t.Fatalf("Leader() = %q while j3 leads", got)
		}
		java.Send("j3 close")
		java.Expect("j3 closed")
		elected(t, requeued).Resign(ctx)
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// Three zkit and three Curator candidates lead in turn, each several
// times, resigning and joining again at the back (two of the zkit ones
// with Requeue). Every leader holds an
// ephemeral node that only one process can hold at a time: no create
// ever finds it taken, and every participant leads every round.
func TestCuratorChurn(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const perKind, rounds = 3, 8
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		holder := path + "-holder"
		java := recipetest.StartLeaderLatch(t, b.Servers)
		for j := range perKind {
			java.Send("j%d churn %s %d %s", j, path, rounds, holder)
		}
		var led ledger
		var overlaps, terms atomic.Int64
		var wg sync.WaitGroup
		for g := range perKind {
			c := b.Connect(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := election.New(c, path, fmt.Sprintf("g%d", g))
				var term *election.Term
				for r := range rounds {
					// Even candidates step down with Requeue (the delete and
					// the next create in one transaction), odd ones with
					// Resign and Campaign.
					var err error
					if term != nil && g%2 == 0 {
						term, err = term.Requeue(ctx)
					} else {
						term, err = e.Campaign(ctx)
					}
					if err != nil {
						t.Error(err)
						return
					}
					led.begin(term)
					terms.Add(1)
					_, err = term.Multi(ctx, client.CreateOp(holder, nil, client.Ephemeral))
					var me *client.MultiError
					switch {
					case errors.As(err, &me) && errors.Is(err, client.ErrNodeExists):
						overlaps.Add(1)
					case err != nil:
						t.Error(err)
					default:
						time.Sleep(2 * time.Millisecond)
						if err := c.Delete(ctx, holder, -1); err != nil {
							t.Error(err)
						}
					}
					if g%2 == 0 && r < rounds-1 {
						continue // Requeue resigns
					}
					if err := term.Resign(ctx); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		for range perKind {
			if line := java.Next(); len(line) < 4 || line[len(line)-len(" churned 0"):] != " churned 0" {
				t.Fatalf("Curator candidate: %q, want \"jN churned 0\" (no overlap)", line)
			}
		}
		wg.Wait()
		led.check(t)
		if n := overlaps.Load(); n > 0 {
			t.Fatalf("%d zkit terms found the holder node taken", n)
		}
		if n := terms.Load(); n != perKind*rounds {
			t.Fatalf("zkit candidates led %d times, want %d", n, perKind*rounds)
		}
		recipetest.WaitChildren(t, admin, path, 0)
	})
}
