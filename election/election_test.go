package election_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
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

// campaign runs Campaign in the background.
func campaign(ctx context.Context, e *election.Election) <-chan *election.Term {
	ch := make(chan *election.Term, 1)
	go func() {
		term, err := e.Campaign(ctx)
		if err != nil {
			term = nil
		}
		ch <- term
	}()
	return ch
}

// elected waits for a background Campaign's term.
func elected(t *testing.T, ch <-chan *election.Term, who string) *election.Term {
	t.Helper()
	select {
	case term := <-ch:
		if term == nil {
			t.Fatalf("%s: Campaign failed", who)
		}
		return term
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatalf("%s did not become leader", who)
	}
	return nil
}

// notElected checks that a background Campaign has not returned.
func notElected(t *testing.T, ch <-chan *election.Term, who string) {
	t.Helper()
	select {
	case term := <-ch:
		t.Fatalf("%s returned from Campaign (term %v) while it must not lead", who, term != nil)
	default:
	}
}

// Many candidates on many sessions: every term is alone, tokens grow, and
// the leaders' fenced increments of a counter all land.
func TestOneLeaderAtATime(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const sessions, perSession, rounds = 4, 2, 5
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		counter := path + "-counter"
		if _, err := admin.Create(ctx, counter, make([]byte, 8), client.Persistent); err != nil {
			t.Fatal(err)
		}
		var led ledger
		var wg sync.WaitGroup
		for s := range sessions {
			c := b.Connect(t)
			for g := range perSession {
				wg.Add(1)
				go func() {
					defer wg.Done()
					e := election.New(c, path, fmt.Sprintf("s%d-g%d", s, g))
					for range rounds {
						term, err := e.Campaign(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						led.begin(term)
						data, st, err := c.Get(ctx, counter)
						if err == nil {
							n := binary.BigEndian.Uint64(data) + 1
							_, err = term.Multi(ctx, client.SetOp(counter, binary.BigEndian.AppendUint64(nil, n), st.Version))
						}
						if rerr := term.Resign(ctx); err == nil {
							err = rerr
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
		}
		wg.Wait()
		led.check(t)
		data, _, err := admin.Get(ctx, counter)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := binary.BigEndian.Uint64(data), uint64(sessions*perSession*rounds); got != want {
			t.Fatalf("fenced counter = %d, want %d", got, want)
		}
		recipetest.WaitChildren(t, admin, path, 0)
	})
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

func same(term *election.Term, l election.Leader) bool {
	return l.ID == term.ID() && l.Node == term.Node() && l.Token == term.Token()
}

// Resigning hands over to the next candidate in queue order, and Observe
// reports every change in order; after a burst of churn it ends on the
// true leader.
func TestResignHandsOver(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const n = 4
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		observer := election.New(b.Connect(t), path, "")
		feed := observer.Observe(ctx)
		if l := next(t, feed); l != election.NoLeader {
			t.Fatalf("empty election observed as %v", l)
		}
		var pending []<-chan *election.Term
		es := make([]*election.Election, n)
		for i := range n {
			es[i] = election.New(b.Connect(t), path, fmt.Sprintf("c%d", i))
			pending = append(pending, campaign(ctx, es[i]))
			recipetest.WaitChildren(t, admin, path, i+1) // join in order
		}
		var led ledger
		term := elected(t, pending[0], "c0")
		for i := range n {
			led.begin(term)
			if l := next(t, feed); !same(term, l) {
				t.Fatalf("observed %v, want the term of %s (%s)", l, term.ID(), term.Node())
			}
			if l, err := observer.Leader(ctx); err != nil || !same(term, l) {
				t.Fatalf("Leader() = %v, %v; want %s", l, err, term.ID())
			}
			for _, p := range pending[i+1:] {
				notElected(t, p, "a later candidate")
			}
			if err := term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(term.Err(), recipes.ErrReleased) {
				t.Fatalf("resigned term ended with %v", term.Err())
			}
			if i+1 < n {
				term = elected(t, pending[i+1], fmt.Sprintf("c%d", i+1))
			}
		}
		if l := next(t, feed); l != election.NoLeader {
			t.Fatalf("after the last resignation: observed %v, want no leader", l)
		}

		// Churn: every candidate leads, resigns and joins again at the back,
		// as fast as it can. The observer may skip leaders, but what it
		// reports comes in term order, and it ends on the true leader.
		const rounds = 5
		var wg sync.WaitGroup
		for _, e := range es {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					term, err := e.Campaign(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					led.begin(term)
					term.Resign(ctx)
				}
			}()
		}
		wg.Wait()
		last, err := election.New(b.Connect(t), path, "last").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		led.begin(last)
		var seen election.Leader
		for !same(last, seen) {
			l := next(t, feed)
			if l != election.NoLeader && l.Token <= seen.Token {
				t.Fatalf("observed %v after %v: out of term order", l, seen)
			}
			if l != election.NoLeader {
				seen = l
			}
		}
		led.check(t)
		if len(led.terms) != n+n*rounds+1 {
			t.Fatalf("%d terms, want %d", len(led.terms), n+n*rounds+1)
		}
		last.Resign(ctx)
		if l := next(t, feed); l != election.NoLeader {
			t.Fatalf("after the last resignation: observed %v, want no leader", l)
		}
	})
}

// A leader whose session expires loses its term; the next candidate leads
// with a higher token, and ZooKeeper refuses the old term's fenced writes.
func TestLeaderSessionExpired(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		ca := b.Connect(t)
		path := electionPath(t, ca)
		// Tolerant of suspension, so that the cause is the expiry itself.
		old, err := election.New(ca, path, "a", election.WithSuspendTolerance(time.Hour)).Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pending := campaign(ctx, election.New(b.Connect(t), path, "b"))
		recipetest.WaitChildren(t, ca, path, 2)
		b.ExpireSession(t, old.Session())
		recipetest.Within(t, old.Done(), "the expired leader's Done")
		if err := old.Err(); !errors.Is(err, recipes.ErrLost) || !errors.Is(err, client.ErrSessionLost) {
			t.Fatalf("term ended with %v, want session lost", err)
		}
		term := elected(t, pending, "b")
		if term.Token() <= old.Token() {
			t.Fatalf("next token %d not above the expired leader's %d", term.Token(), old.Token())
		}
		mark := path + "-mark"
		if _, err := old.Multi(ctx, client.CreateOp(mark, nil, client.Persistent)); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("the old term's Multi: %v, want ErrLost", err)
		}
		// ZooKeeper itself refuses the old guard, whatever the old leader
		// believes.
		if _, err := ca.Multi(ctx, old.Guard(), client.CreateOp(mark, nil, client.Persistent)); err == nil {
			t.Fatal("ZooKeeper applied a write guarded by the expired term")
		}
		if ok, _, _ := ca.Exists(ctx, mark); ok {
			t.Fatal("a write guarded by the expired term was applied")
		}
		if err := old.Resign(ctx); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("Resign of a lost term: %v, want ErrLost", err)
		}
		term.Resign(ctx)
	})
}

// A leader cut off from the server past its session timeout: with the
// default tolerance its term ends as soon as the connection is suspended,
// before the server expires the session and the next candidate leads, so
// the terms never overlap; a fenced resource refuses the old term's writes.
func TestLeaderPartitioned(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		ca := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(2*time.Second)))...)
		var led ledger
		old, err := election.New(ca, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		led.begin(old)
		pending := campaign(ctx, election.New(b.Connect(t), path, "b"))
		recipetest.WaitChildren(t, admin, path, 2)

		// The old leader writes to the resource for as long as its term
		// lasts.
		stale := make(chan bool, 1)
		go func() {
			for old.Err() == nil {
				if !led.write(old.Token()) {
					stale <- true
					return
				}
				time.Sleep(time.Millisecond)
			}
			stale <- false
		}()
		cut()
		recipetest.Within(t, old.Done(), "the partitioned leader's Done")
		if !errors.Is(old.Err(), recipes.ErrSuspended) {
			t.Fatalf("term ended with %v, want ErrSuspended", old.Err())
		}
		if <-stale {
			t.Fatal("the old leader's write was refused while its term lasted")
		}
		term := elected(t, pending, "b")
		led.begin(term)
		if !led.write(term.Token()) {
			t.Fatal("the new leader's write was refused")
		}
		if led.write(old.Token()) {
			t.Fatal("the resource accepted the old term's token after the new one's")
		}
		led.check(t)

		heal()
		// The old session has expired on the server: its node is gone, and
		// ZooKeeper refuses the old guard.
		if _, err := ca.Multi(ctx, old.Guard(), client.CreateOp(path+"-mark", nil, client.Persistent)); err == nil {
			t.Fatal("ZooKeeper applied a write guarded by the partitioned term")
		}
		if err := old.Resign(ctx); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("Resign of a lost term: %v, want ErrLost", err)
		}
		term.Resign(ctx)
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// Deleting the leader's node ends its term and elects the next candidate.
func TestNodeDeletedEndsTerm(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		old, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pending := campaign(ctx, election.New(b.Connect(t), path, "b"))
		recipetest.WaitChildren(t, admin, path, 2)
		if err := admin.Delete(ctx, old.Node(), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, old.Done(), "Done after the node was deleted")
		if !errors.Is(old.Err(), recipes.ErrNodeDeleted) {
			t.Fatalf("term ended with %v, want ErrNodeDeleted", old.Err())
		}
		elected(t, pending, "b").Resign(ctx)
	})
}

// A candidate must never lead on a deduction that the server contradicts:
// not when its own node was deleted while it waited, and not when someone
// wrote to the leader's node (which a lock waiter takes for a release).
func TestNoFalseLeadership(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		leader, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}

		// Own node deleted while waiting: Campaign fails, no term.
		done := make(chan error, 1)
		go func() {
			_, err := election.New(b.Connect(t), path, "b").Campaign(ctx)
			done <- err
		}()
		recipetest.WaitChildren(t, admin, path, 2)
		for _, name := range recipetest.Children(t, admin, path) {
			if path+"/"+name != leader.Node() {
				if err := admin.Delete(ctx, path+"/"+name, -1); err != nil {
					t.Fatal(err)
				}
			}
		}
		select {
		case err := <-done:
			if !errors.Is(err, recipes.ErrNodeDeleted) {
				t.Fatalf("Campaign whose node was deleted: %v, want ErrNodeDeleted", err)
			}
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("Campaign went on after its node was deleted")
		}

		// A write to the leader's node deposes it (its term ends and its
		// node is deleted), but the next candidate leads only once that
		// node is gone.
		pending := campaign(ctx, election.New(b.Connect(t), path, "c"))
		recipetest.WaitChildren(t, admin, path, 2)
		if _, err := admin.Set(ctx, leader.Node(), []byte("not a"), -1); err != nil {
			t.Fatal(err)
		}
		term := elected(t, pending, "c")
		if leader.Err() == nil {
			t.Fatal("c leads while a's term lasts")
		}
		if ok, _, err := admin.Exists(ctx, leader.Node()); err != nil || ok {
			t.Fatalf("c leads while a's node exists (%v)", err)
		}
		term.Resign(ctx)
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// A lost create reply leaves exactly one node, which leads.
func TestLostCreateReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		if err := admin.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		c := b.Connect(t, b.CutNextCreate(t, path)...)
		term, err := election.New(c, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := recipetest.Children(t, admin, path); len(got) != 1 || path+"/"+got[0] != term.Node() {
			t.Fatalf("after a lost create reply: nodes %v, term %s", got, term.Node())
		}
		if err := term.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// Cancelling or timing out a Campaign deletes its node.
func TestCancelWhileWaiting(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := electionPath(t, c)
		leader, err := election.New(c, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := election.New(b.Connect(t), path, "b").Campaign(wctx)
			done <- err
		}()
		recipetest.WaitChildren(t, c, path, 2)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Campaign returned %v, want context.Canceled", err)
		}
		recipetest.WaitChildren(t, c, path, 1)
		tctx, cancelT := context.WithTimeout(ctx, zktest.Scale(200*time.Millisecond))
		defer cancelT()
		if _, err := election.New(b.Connect(t), path, "c").Campaign(tctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Campaign returned %v, want context.DeadlineExceeded", err)
		}
		recipetest.WaitChildren(t, c, path, 1)
		if err := leader.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Invalid ids and paths get an *client.InputError before anything is sent.
func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		isInput := func(err error) bool {
			var ie *client.InputError
			return errors.As(err, &ie) && errors.Is(err, client.ErrInvalidInput)
		}
		for _, id := range []string{"", "\xff\xfe", "two\nlines", "nul\x00", "bell\a"} {
			if _, err := election.New(c, base+"/e", id).Campaign(ctx); !isInput(err) {
				t.Errorf("Campaign with id %q = %v, want an *client.InputError", id, err)
			}
		}
		if _, err := election.New(c, base+"/e", strings.Repeat("x", 2<<20)).Campaign(ctx); !isInput(err) {
			t.Errorf("Campaign with a 2 MB id = %v, want an *client.InputError", err)
		}
		for _, p := range []string{"", "relative", base + "//x", base + "/x/", base + "/./x", base + "/bad\x00name"} {
			e := election.New(c, p, "a")
			if _, err := e.Campaign(ctx); !isInput(err) {
				t.Errorf("Campaign at %q = %v, want an *client.InputError", p, err)
			}
			if _, err := e.Leader(ctx); !isInput(err) {
				t.Errorf("Leader at %q = %v, want an *client.InputError", p, err)
			}
			feed := e.Observe(ctx)
			for range feed.Values() {
				t.Errorf("Observe at %q delivered a value", p)
			}
			if !isInput(feed.Err()) {
				t.Errorf("Observe at %q ended with %v, want an *client.InputError", p, feed.Err())
			}
		}
		if ok, _, err := c.Exists(ctx, base); err != nil || ok {
			t.Fatalf("something was created under %s (exists=%v, err=%v)", base, ok, err)
		}
		if !c.Session().Alive() {
			t.Fatal("bad input cost the session")
		}
	})
}

// Children of other shapes are ignored, by candidates and observers.
func TestForeignNodesIgnored(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := electionPath(t, c)
		if err := c.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"readme", "latch-", "latch-12x", "_c_junk-lock-0000000001"} {
			if _, err := c.Create(ctx, path+"/"+name, nil, client.Persistent); err != nil {
				t.Fatal(err)
			}
		}
		e := election.New(c, path, "a")
		if l, err := e.Leader(ctx); err != nil || l != election.NoLeader {
			t.Fatalf("Leader among foreign nodes = %v, %v; want no leader", l, err)
		}
		term, err := e.Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if l, err := e.Leader(ctx); err != nil || !same(term, l) {
			t.Fatalf("Leader = %v, %v; want a", l, err)
		}
		term.Resign(ctx)
	})
}

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
		second := elected(t, pending, "b")
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

// A server restart: a leader whose tolerance covers it keeps its term
// and the candidate behind it keeps waiting; a leader with the default
// tolerance loses its term, and its node is deleted once the connection is
// back, so that the next candidate leads.
func TestServerRestart(t *testing.T) {
	run := func(t *testing.T, b zktest.Backend, restart func()) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		tolerant, strict := electionPath(t, admin)+"-tolerant", electionPath(t, admin)+"-strict"
		c := b.Connect(t, client.WithSessionTimeout(zktest.Scale(30*time.Second)))
		kept, err := election.New(c, tolerant, "a", election.WithSuspendTolerance(time.Minute)).Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lost, err := election.New(c, strict, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		behindKept := campaign(ctx, election.New(b.Connect(t), tolerant, "b"))
		behindLost := campaign(ctx, election.New(b.Connect(t), strict, "b"))
		recipetest.WaitChildren(t, admin, tolerant, 2)
		recipetest.WaitChildren(t, admin, strict, 2)

		restart()
		recipetest.Within(t, lost.Done(), "the strict term's end")
		if !errors.Is(lost.Err(), recipes.ErrSuspended) {
			t.Fatalf("strict term ended with %v, want ErrSuspended", lost.Err())
		}
		elected(t, behindLost, "b behind the strict leader").Resign(ctx)
		if kept.Err() != nil {
			t.Fatalf("the tolerant term ended: %v", kept.Err())
		}
		notElected(t, behindKept, "b behind the tolerant leader")
		if _, err := kept.Multi(ctx, client.CreateOp(tolerant+"-mark", nil, client.Persistent)); err != nil {
			t.Fatalf("fenced write after the restart: %v", err)
		}
		kept.Resign(ctx)
		elected(t, behindKept, "b behind the tolerant leader").Resign(ctx)
	}
	t.Run("zookeeper", func(t *testing.T) {
		zk := zktest.StartZooKeeper(t)
		run(t, zktest.Backend{Name: "zookeeper", Servers: zk.Servers()}, func() {
			zk.Kill(0)
			zk.Restart(0)
		})
	})
	t.Run("reference", func(t *testing.T) {
		b := zktest.ReferenceBackend(t)
		run(t, b, func() {
			if err := b.Reference().Restart(); err != nil {
				t.Fatal(err)
			}
		})
	})
}
