package election_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A leader proclaims a new id without resigning: Leader, Observe and
// Participants report it, the term goes on (its own write does not end
// it, and it can proclaim again), and the candidate behind it, woken by
// the write, waits on and takes over at the resignation with its own id.
func TestProclaim(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		observer := election.New(admin, path, "")
		feed := observer.Observe(ctx)
		ca, cb := b.Connect(t), b.Connect(t)
		term, err := election.New(ca, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pendingB := campaign(ctx, election.New(cb, path, "b"))
		// The leader watches its node, and b watches it too.
		recipetest.WaitWatched(t, b, ca.Session(), term.Node())
		recipetest.WaitWatched(t, b, cb.Session(), term.Node())

		if err := term.Proclaim(ctx, "a2"); err != nil {
			t.Fatalf("Proclaim: %v", err)
		}
		if term.ID() != "a2" {
			t.Fatalf("ID() = %q after Proclaim, want a2", term.ID())
		}
		// The write fired both watches; both are set again, the term held.
		recipetest.WaitWatched(t, b, ca.Session(), term.Node())
		recipetest.WaitWatched(t, b, cb.Session(), term.Node())
		if err := term.Err(); err != nil {
			t.Fatalf("the term ended after its own Proclaim: %v", err)
		}
		notElected(t, pendingB)
		if l, err := observer.Leader(ctx); err != nil || l.ID != "a2" || l.Node != term.Node() || l.Token != term.Token() {
			t.Fatalf("Leader() = %v, %v; want a2 on the term's node", l, err)
		}
		if got := lineOf(participantsOf(t, observer)); got != "a2* b" {
			t.Fatalf("participants %q, want \"a2* b\"", got)
		}
		awaitLeader(t, feed, "a2 observed", func(l election.Leader) bool { return l.ID == "a2" && l.Node == term.Node() })

		if err := term.Proclaim(ctx, "a3"); err != nil {
			t.Fatalf("a second Proclaim: %v", err)
		}
		awaitLeader(t, feed, "a3 observed", func(l election.Leader) bool { return l.ID == "a3" && l.Node == term.Node() })
		if _, err := term.Multi(ctx, client.CreateOp(path+"-mark", nil, client.Persistent)); err != nil {
			t.Fatalf("a fenced write after Proclaim: %v", err)
		}
		if err := term.Resign(ctx); err != nil {
			t.Fatalf("Resign after Proclaim: %v, want nil (held until then)", err)
		}
		next := elected(t, pendingB)
		if next.ID() != "b" {
			t.Fatalf("the next leader's ID() = %q, want b", next.ID())
		}
		awaitLeader(t, feed, "b observed", func(l election.Leader) bool { return l.ID == "b" })
		next.Resign(ctx)
	})
}

// Proclaim is fenced: on a term that has ended (resigned, its node
// deleted, its session expired) it publishes nothing and returns an error
// matching the term's end. An invalid id is an *client.InputError naming
// proclaim, sent nowhere, and the term goes on.
func TestProclaimFenced(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		e := election.New(b.Connect(t), path, "a")

		term, err := e.Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"", "two\nlines", strings.Repeat("x", 2<<20)} {
			var ie *client.InputError
			if err := term.Proclaim(ctx, id); !errors.As(err, &ie) || ie.Op != "proclaim" {
				t.Fatalf("Proclaim(%.10q): %v, want an *client.InputError naming proclaim", id, err)
			}
		}
		if data, _, err := admin.Get(ctx, term.Node()); err != nil || string(data) != "a" || term.Err() != nil {
			t.Fatalf("after refused ids: node data %q (%v), term %v; want a, held", data, err, term.Err())
		}
		if err := term.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		if err := term.Proclaim(ctx, "late"); !errors.Is(err, election.ErrReleased) {
			t.Fatalf("Proclaim after Resign: %v, want ErrReleased", err)
		}

		term, err = e.Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Delete(ctx, term.Node(), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, term.Done(), "the end of the term whose node was deleted")
		if err := term.Proclaim(ctx, "late"); !errors.Is(err, election.ErrNodeDeleted) || term.ID() != "a" {
			t.Fatalf("Proclaim after the node's deletion: %v (ID %q), want ErrNodeDeleted, ID a", err, term.ID())
		}

		doomed := b.Connect(t)
		term, err = election.New(doomed, path, "d", election.WithSuspendTolerance(time.Hour)).Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b.ExpireSession(t, doomed.Session())
		recipetest.Within(t, term.Done(), "the end of the term whose session expired")
		if err := term.Proclaim(ctx, "late"); !errors.Is(err, election.ErrLost) || !client.IsSessionLost(err) {
			t.Fatalf("Proclaim after the session expired: %v, want ErrLost and a lost session", err)
		}
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// A Proclaim whose reply is lost (the connection cut once the write is
// sent) reads the node back on the next connection: the write was applied,
// Proclaim returns nil, and the term, which takes the write for its own,
// goes on.
func TestProclaimLostReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		term, err := election.New(c, path, "a", election.WithSuspendTolerance(time.Hour)).Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		recipetest.WaitWatched(t, b, c.Session(), term.Node())
		proxy.CutAfterNextRequest()
		if err := term.Proclaim(ctx, "a2"); err != nil {
			t.Fatalf("Proclaim with its reply lost: %v", err)
		}
		recipetest.WaitWatched(t, b, c.Session(), term.Node())
		if data, st, err := admin.Get(ctx, term.Node()); err != nil || string(data) != "a2" || st.Version != 1 {
			t.Fatalf("node data %q (%v), want a2 written once", data, err)
		}
		if err := term.Err(); err != nil {
			t.Fatalf("the term ended: %v", err)
		}
		if err := term.Proclaim(ctx, "a3"); err != nil {
			t.Fatalf("the next Proclaim: %v", err)
		}
		if err := term.Resign(ctx); err != nil {
			t.Fatalf("Resign: %v, want nil (held until then)", err)
		}
	})
}
