package election_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// participantsOf lists e's participants, failing t on error.
func participantsOf(t *testing.T, e *election.Election) []election.Participant {
	t.Helper()
	ps, err := e.Participants(recipetest.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// lineOf renders participants as "id*" for the leader and "id" for the
// others, in order.
func lineOf(ps []election.Participant) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.ID)
		if p.Leader {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// Participants lists the candidates in line order, the leader first, with
// their ids and nodes; children of other shapes are left out; after a
// resignation the next candidate is listed first, as the leader. A path
// that does not exist has none.
func TestParticipants(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		observer := election.New(admin, path, "")
		if ps := participantsOf(t, observer); ps != nil {
			t.Fatalf("participants of a missing path: %v", ps)
		}
		term, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Create(ctx, path+"/readme", nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		var pending []*candidacy
		for i, id := range []string{"b", "c"} {
			pending = append(pending, campaign(ctx, election.New(b.Connect(t), path, id)))
			recipetest.WaitChildren(t, admin, path, i+3) // join in order
		}
		ps := participantsOf(t, observer)
		if got := lineOf(ps); got != "a* b c" {
			t.Fatalf("participants %q, want \"a* b c\"", got)
		}
		if ps[0].Node != term.Node() {
			t.Fatalf("the leader's node %s, want the term's %s", ps[0].Node, term.Node())
		}
		for _, p := range ps[1:] {
			if !strings.HasPrefix(p.Node, path+"/_c_") || !strings.Contains(p.Node, "-latch-") {
				t.Fatalf("node %q is not a candidate's node in %s", p.Node, path)
			}
		}
		if err := term.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		next := elected(t, pending[0])
		if got := lineOf(participantsOf(t, observer)); got != "b* c" {
			t.Fatalf("after a resigned: participants %q, want \"b* c\"", got)
		}
		next.Resign(ctx)
		elected(t, pending[1]).Resign(ctx)
		if got := participantsOf(t, observer); len(got) != 0 {
			t.Fatalf("after every candidate resigned: %v", got)
		}
	})
}

// A candidate whose session expired is not listed once the server has
// deleted its node; Participants on a closed client fails with
// client.ErrClosed.
func TestParticipantsAfterLoss(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		doomed := b.Connect(t)
		term, err := election.New(doomed, path, "doomed").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		next := campaign(ctx, election.New(b.Connect(t), path, "next"))
		recipetest.WaitChildren(t, admin, path, 2)
		b.ExpireSession(t, doomed.Session())
		recipetest.Within(t, term.Done(), "the expired leader's term ends")
		elected(t, next)
		if got := lineOf(participantsOf(t, election.New(admin, path, ""))); got != "next*" {
			t.Fatalf("after the leader's session expired: participants %q, want \"next*\"", got)
		}
		closed := b.Connect(t)
		closed.Close()
		if _, err := election.New(closed, path, "").Participants(ctx); !errors.Is(err, client.ErrClosed) {
			t.Fatalf("Participants on a closed client: %v, want client.ErrClosed", err)
		}
	})
}
