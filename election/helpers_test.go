package election_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// electionPath returns a fresh election path for the test, and makes sure
// its parent exists.
func electionPath(t *testing.T, c *client.Client) string {
	t.Helper()
	p := zktest.UniquePath(t)
	if err := c.EnsurePath(recipetest.Context(t), p); err != nil {
		t.Fatal(err)
	}
	return p + "/election"
}

// ledger is what leaders act on: it checks that no two terms are open at
// once in zkit's accounting (a term is open from Campaign's return until
// Done is closed, which Resign does before it deletes the node), and it
// refuses a token lower than the highest it has seen, as a fenced resource
// does.
type ledger struct {
	mu         sync.Mutex
	terms      []*election.Term // in the order they began
	highest    int64
	violations []string
}

// begin records a new term.
func (l *ledger) begin(term *election.Term) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.terms {
		if t.Err() == nil {
			l.violations = append(l.violations, fmt.Sprintf("%s began while %s's term was open", term.ID(), t.ID()))
		}
	}
	if term.Token() <= l.highest {
		l.violations = append(l.violations, fmt.Sprintf("%s: token %d after %d", term.ID(), term.Token(), l.highest))
	}
	l.highest = term.Token()
	l.terms = append(l.terms, term)
}

// write is a fenced write to the resource: accepted unless a higher
// token has been seen.
func (l *ledger) write(token int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if token < l.highest {
		return false
	}
	l.highest = token
	return true
}

func (l *ledger) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.violations) > 0 {
		t.Fatalf("one leader at a time violated: %v", l.violations)
	}
}

// candidacy is a Campaign running in the background.
type candidacy struct {
	who  string
	done chan struct{}
	term *election.Term
	err  error
}

// campaign runs e's Campaign in the background.
func campaign(ctx context.Context, e *election.Election) *candidacy {
	return campaignWith(func() (*election.Term, error) { return e.Campaign(ctx) }, e.ID())
}

// campaignWith runs fn (a Campaign or a Requeue of who's) in the
// background.
func campaignWith(fn func() (*election.Term, error), who string) *candidacy {
	c := &candidacy{who: who, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.term, c.err = fn()
	}()
	return c
}

// elected waits for a background Campaign's term.
func elected(t *testing.T, c *candidacy) *election.Term {
	t.Helper()
	select {
	case <-c.done:
		if c.err != nil {
			t.Fatalf("%s: Campaign: %v", c.who, c.err)
		}
		return c.term
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatalf("%s did not become leader", c.who)
	}
	return nil
}

// notElected checks that a background Campaign has not returned.
func notElected(t *testing.T, c *candidacy) {
	t.Helper()
	select {
	case <-c.done:
		t.Fatalf("%s returned from Campaign (%v) while it must not lead", c.who, c.err)
	default:
	}
}

// next receives the next leader the feed reports.
func next(t *testing.T, feed *recipes.Feed[election.Leader]) election.Leader {
	t.Helper()
	select {
	case l, ok := <-feed.Values():
		if !ok {
			t.Fatalf("Observe ended: %v", feed.Err())
		}
		return l
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("Observe reported nothing")
	}
	return election.Leader{}
}

// awaitLeader receives from feed until ok(leader), each value within
// next's deadline; what names what it waits for.
func awaitLeader(t *testing.T, feed *recipes.Feed[election.Leader], what string, ok func(election.Leader) bool) {
	t.Helper()
	for l := next(t, feed); !ok(l); l = next(t, feed) {
		t.Logf("observed %v, waiting for %s", l, what)
	}
}

func same(term *election.Term, l election.Leader) bool {
	return l.ID == term.ID() && l.Node == term.Node() && l.Token == term.Token()
}

// onlyNode fails t unless term's node is the only child of dir.
func onlyNode(t *testing.T, c *client.Client, dir string, term *election.Term, when string) {
	t.Helper()
	if names := recipetest.Children(t, c, dir); len(names) != 1 || names[0] != nodeName(term.Node()) {
		t.Fatalf("%s: %v, want only %s", when, names, term.Node())
	}
}

func nodeName(p string) string {
	_, name := client.SplitPath(p)
	return name
}
