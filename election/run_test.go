package election_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// running is a Run in the background.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

func run(ctx context.Context, e *election.Election, lead func(context.Context, *election.Term) error) *running {
	ctx, cancel := context.WithCancel(ctx)
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- e.Run(ctx, lead) }()
	return r
}

// stop ends a Run and checks that it returned nil.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run after a stop: %v, want nil", err)
		}
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("Run did not return after a stop")
	}
}

// termOf waits for a term on ch.
func termOf(t *testing.T, ch <-chan *election.Term, who string) *election.Term {
	t.Helper()
	select {
	case term := <-ch:
		return term
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatalf("%s did not lead", who)
	}
	return nil
}

// A leader whose session expires: lead's context ends with a cause
// matching ErrLost, the next candidate leads, and the first one campaigns
// again under its new session and leads again once the other lets go.
func TestRunRequeuesAfterLoss(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		ca := b.Connect(t)
		aTerms, aEnds := make(chan *election.Term, 4), make(chan error, 4)
		a := run(ctx, election.New(ca, path, "a"), func(ctx context.Context, term *election.Term) error {
			aTerms <- term
			<-ctx.Done()
			aEnds <- context.Cause(ctx)
			return ctx.Err()
		})
		first := termOf(t, aTerms, "a")

		bTerms, bRelease := make(chan *election.Term, 4), make(chan struct{})
		bDone := make(chan struct{}, 4)
		bRun := run(ctx, election.New(b.Connect(t), path, "b"), func(ctx context.Context, term *election.Term) error {
			bTerms <- term
			select {
			case <-bRelease:
			case <-ctx.Done():
			}
			bDone <- struct{}{}
			return nil
		})
		recipetest.WaitChildren(t, admin, path, 2)

		b.ExpireSession(t, first.Session())
		select {
		case cause := <-aEnds:
			if !errors.Is(cause, election.ErrLost) {
				t.Fatalf("lead's context ended with %v, want a cause matching ErrLost", cause)
			}
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("lead's context did not end when its session expired")
		}
		bt := termOf(t, bTerms, "b")
		if bt.Token() <= first.Token() {
			t.Fatalf("b's token %d after a's %d", bt.Token(), first.Token())
		}
		recipetest.WaitChildren(t, admin, path, 2) // a is back in the election

		close(bRelease) // b gives up its term: a leads again, under its new session
		second := termOf(t, aTerms, "a")
		if second.Session().ID() == first.Session().ID() || second.Token() <= bt.Token() {
			t.Fatalf("a's second term: session 0x%x (first 0x%x), token %d after %d",
				second.Session().ID(), first.Session().ID(), second.Token(), bt.Token())
		}
		select {
		case <-bDone:
		default:
			t.Fatal("a leads while b's lead has not returned")
		}
		bRun.stop(t)
		a.stop(t)
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// A candidate whose session expires while Run campaigns (waiting behind
// the leader) does not stop Run: it campaigns again under the client's
// next session, and leads once the leader lets go.
func TestRunCampaignsAgainAfterLossWhileWaiting(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		leader, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cb := b.Connect(t)
		terms := make(chan *election.Term, 2)
		r := run(ctx, election.New(cb, path, "b"), func(ctx context.Context, term *election.Term) error {
			terms <- term
			<-ctx.Done()
			return nil
		})
		recipetest.WaitChildren(t, admin, path, 2)
		lost := cb.Session()
		b.ExpireSession(t, lost)
		recipetest.Eventually(t, "b campaigns again under a new session", func() bool {
			select {
			case err := <-r.done:
				t.Fatalf("Run returned %v after a session loss while it campaigned", err)
			default:
			}
			for _, name := range recipetest.Children(t, admin, path) {
				_, st, err := admin.Get(ctx, path+"/"+name)
				if err == nil && path+"/"+name != leader.Node() && st.EphemeralOwner != lost.ID() {
					return true
				}
			}
			return false
		})
		if err := leader.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		if term := termOf(t, terms, "b"); term.Session() == lost {
			t.Fatal("b leads under the session it lost")
		}
		r.stop(t)
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// Run waits at least the requeue pause between the end of one term and
// the next campaign.
func TestRunRequeuePause(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := electionPath(t, c)
		pause := zktest.Scale(300 * time.Millisecond)
		type span struct{ start, end time.Time }
		spans := make(chan span, 8)
		r := run(ctx, election.New(c, path, "a", election.WithRequeuePause(pause)), func(ctx context.Context, term *election.Term) error {
			start := time.Now()
			spans <- span{start, time.Now()} // gives its term up at once
			return nil
		})
		var prev span
		for i := range 3 {
			var s span
			select {
			case s = <-spans:
			case <-time.After(zktest.Scale(20 * time.Second)):
				t.Fatalf("term %d did not come", i+1)
			}
			if i > 0 {
				if gap := s.start.Sub(prev.end); gap < pause {
					t.Fatalf("term %d began %v after the last one ended, want at least %v", i+1, gap, pause)
				}
			}
			prev = s
		}
		r.stop(t)
		recipetest.WaitChildren(t, c, path, 0)
	})
}

// A stop while leading cancels lead's context with ctx's cause, resigns
// (the next candidate leads) and returns nil; so does a stop while
// campaigning, which leaves no node.
func TestRunStop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		ends := make(chan error, 2)
		terms := make(chan *election.Term, 2)
		lead := func(ctx context.Context, term *election.Term) error {
			terms <- term
			<-ctx.Done()
			ends <- context.Cause(ctx)
			return ctx.Err()
		}
		a := run(ctx, election.New(b.Connect(t), path, "a"), lead)
		at := termOf(t, terms, "a")
		bRun := run(ctx, election.New(b.Connect(t), path, "b"), lead)
		recipetest.WaitChildren(t, admin, path, 2)
		waiting := run(ctx, election.New(b.Connect(t), path, "c"), lead)
		recipetest.WaitChildren(t, admin, path, 3)

		a.stop(t)
		if cause := <-ends; !errors.Is(cause, context.Canceled) {
			t.Fatalf("lead's context after a stop: %v, want context.Canceled", cause)
		}
		if !errors.Is(at.Err(), election.ErrReleased) {
			t.Fatalf("a's term after the stop: %v, want ErrReleased (resigned)", at.Err())
		}
		bt := termOf(t, terms, "b")
		if bt.ID() != "b" {
			t.Fatalf("%s leads after a's stop, want b", bt.ID())
		}
		recipetest.WaitChildren(t, admin, path, 2)
		waiting.stop(t) // campaigning, not leading
		recipetest.WaitChildren(t, admin, path, 1)
		bRun.stop(t)
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// lead returning an error while its term lasts stops Run with that error,
// resigned.
func TestRunLeadError(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := electionPath(t, c)
		boom := errors.New("boom")
		var term *election.Term
		err := election.New(c, path, "a").Run(ctx, func(ctx context.Context, t *election.Term) error {
			term = t
			return boom
		})
		if err != boom {
			t.Fatalf("Run: %v, want lead's error as it is", err)
		}
		if !errors.Is(term.Err(), election.ErrReleased) {
			t.Fatalf("term after Run: %v, want resigned", term.Err())
		}
		recipetest.WaitChildren(t, c, path, 0)

		// Bad input and a closed client stop Run too.
		var ie *client.InputError
		if err := election.New(c, path, "").Run(ctx, nil); !errors.As(err, &ie) {
			t.Fatalf("Run with an empty id: %v, want an *client.InputError", err)
		}
		closed := b.Connect(t)
		closed.Close()
		if err := election.New(closed, path, "a").Run(ctx, nil); !errors.Is(err, client.ErrClosed) {
			t.Fatalf("Run on a closed client: %v, want client.ErrClosed", err)
		}
	})
}

// Four candidates, each running lead again and again: leads that give up
// their term, and leaders whose session expires. A fenced resource (a
// node holding the token of the last write, written only through
// term.Multi) never accepts a write of an older term after a newer one's;
// and while no session expires, no lead begins while another one runs or
// another one's term is open. (A leader whose session expires may still
// be running lead when the next one begins: it has not heard yet; the
// fence is what refuses its writes.)
func TestRunOneLeaderAtATime(t *testing.T) {
	for _, expire := range []bool{false, true} {
		t.Run(map[bool]string{false: "resign", true: "expiry"}[expire], func(t *testing.T) {
			zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
				testOneLeaderAtATime(t, b, expire)
			})
		})
	}
}

func testOneLeaderAtATime(t *testing.T, b zktest.Backend, expire bool) {
	const candidates, terms, writes = 4, 24, 3
	ctx := recipetest.Context(t)
	admin := b.Connect(t)
	path := electionPath(t, admin)
	resource := path + "-resource"
	if _, err := admin.Create(ctx, resource, make([]byte, 8), client.Persistent); err != nil {
		t.Fatal(err)
	}
	var (
		led        ledger
		mu         sync.Mutex
		begun      int
		inLead     int // leads running now
		violations []string
		current    = make(chan *election.Term, terms*2)
		enough     = make(chan struct{})
	)
	lead := func(ctx context.Context, term *election.Term) error {
		mu.Lock()
		begun++
		if begun == terms {
			close(enough)
		}
		inLead++
		if inLead > 1 && !expire {
			violations = append(violations, fmt.Sprintf("%d leads running at once", inLead))
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			inLead--
			mu.Unlock()
		}()
		if !expire {
			led.begin(term)
		}
		select {
		case current <- term:
		default:
		}
		for range writes {
			data, st, err := admin.Get(ctx, resource)
			if err != nil {
				return err
			}
			last := int64(binary.BigEndian.Uint64(data))
			_, err = term.Multi(ctx, client.SetOp(resource, binary.BigEndian.AppendUint64(nil, uint64(term.Token())), st.Version))
			if err == nil && last > term.Token() {
				mu.Lock()
				violations = append(violations, fmt.Sprintf("term %d wrote after term %d", term.Token(), last))
				mu.Unlock()
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		return nil
	}
	var runs []*running
	for i := range candidates {
		runs = append(runs, run(ctx, election.New(b.Connect(t), path, fmt.Sprintf("c%d", i)), lead))
	}
	if expire {
		expired := map[int64]bool{}
		for len(expired) < 3 {
			var term *election.Term
			select {
			case term = <-current:
			case <-ctx.Done():
				t.Fatal("no term to expire")
			}
			if id := term.Session().ID(); !expired[id] && term.Session().Alive() {
				expired[id] = true
				b.ExpireSession(t, term.Session())
			}
		}
	}
	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatalf("only %d terms began", begun)
	}
	for _, r := range runs {
		r.stop(t)
	}
	led.check(t)
	if len(violations) > 0 {
		t.Fatalf("%d violations: %v", len(violations), violations[:min(5, len(violations))])
	}
	recipetest.WaitChildren(t, admin, path, 0)
}
