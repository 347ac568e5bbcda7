package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/recipes"
)

// electionCrash: workers campaign for one leadership, each leading in
// turn, and every fifth leader crashes instead of resigning (its session
// expires on the server) and goes on writing as a zombie. Leaders write to
// a fenced resource and increment a counter znode through Term.Multi, and
// hold their term until another candidate is queued behind them, so that
// every handover is contended (while another worker is left). One leader
// at a time: no term begins while another is still held (see termLog),
// the resource never accepts a token below one it has accepted, no leader
// that still holds its term is refused, the crashed leaders' late writes
// are refused by the resource and by ZooKeeper, and every increment of a
// live term lands exactly once.
func electionCrash(ctx context.Context, d *demoEnv) (string, error) {
	return electionRun(ctx, d, electionCandidate)
}

// electionCandidate is the participant id's Campaign in the election at
// path.
func electionCandidate(c *client.Client, path, id string) campaignFunc {
	e := election.New(c, path, id)
	return func(ctx context.Context) (leaderTerm, error) {
		t, err := e.Campaign(ctx)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
}

// leaderTerm is what the election step uses of an *election.Term.
type leaderTerm interface {
	Token() int64
	Node() string
	Session() *client.Session
	Done() <-chan struct{}
	Err() error
	Guard() client.Op
	Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error)
	Resign(ctx context.Context) error
}

// campaignFunc is one participant's Election.Campaign.
type campaignFunc func(ctx context.Context) (leaderTerm, error)

// electionRun is electionCrash on the candidates newCandidate returns
// (election.New's; a test's may be broken on purpose).
func electionRun(ctx context.Context, d *demoEnv, newCandidate func(c *client.Client, path, id string) campaignFunc) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	path, counter := d.path("election"), d.path("election-counter")
	if err := cs[0].EnsurePath(ctx, d.root); err != nil {
		return "", err
	}
	if _, err := cs[0].Create(ctx, counter, encode(0), client.Persistent); err != nil {
		return "", err
	}
	// The election's directory, as its first candidate would create it:
	// every worker campaigns from the start, none slowed down by creating
	// it, so that the first terms are contended too.
	if err := recipes.CreateDir(ctx, cs[0], path); err != nil {
		return "", err
	}
	s := &electionState{d: d, path: path, counter: counter, terms: int64(d.rounds), left: make(chan struct{})}
	s.running.Store(int64(len(cs)))
	d.startClock()
	errc := make(chan error, len(cs))
	var ready sync.WaitGroup
	start := make(chan struct{})
	for i, c := range cs {
		id := fmt.Sprintf("worker-%d", i)
		campaign := newCandidate(c, path, id)
		ready.Add(1)
		go func() {
			ready.Done()
			<-start
			err := s.worker(ctx, c, id, campaign)
			s.leave()
			errc <- err
		}()
	}
	ready.Wait()
	close(start)
	for range cs {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	elapsed := d.stopClock()
	if err := s.res.err(); err != nil {
		return "", err
	}
	data, _, err := cs[0].Get(ctx, counter)
	if err != nil {
		return "", err
	}
	if got, want := decode(data), s.increments.Load(); got != want {
		return "", violationf("counter is %d after %d fenced increments", got, want)
	}
	if kids, _, err := cs[0].Children(ctx, path); err != nil || len(kids) != 0 {
		return "", violationf("election nodes left behind: %v (%v)", kids, err)
	}
	return fmt.Sprintf("%d terms (%d ended by a crash), %.0f failovers/s, no two terms at once, tokens increasing, %d zombie writes refused, counter = %d",
		s.terms, s.crashes.Load(), float64(s.terms)/elapsed.Seconds(), s.res.refusedStale(), s.increments.Load()), nil
}

// crashEvery is how often a leader crashes instead of resigning.
const crashEvery = 5

// electionState is what the workers of electionCrash share.
type electionState struct {
	d             *demoEnv
	path, counter string
	terms         int64 // the terms to run in all
	started       atomic.Int64
	crashes       atomic.Int64
	increments    atomic.Int64
	res           tokenResource
	log           termLog

	running atomic.Int64 // workers that have not returned
	leftMu  sync.Mutex
	left    chan struct{} // closed and replaced when a worker returns; guarded by leftMu
}

// leave records that a worker returned.
func (s *electionState) leave() {
	s.leftMu.Lock()
	defer s.leftMu.Unlock()
	s.running.Add(-1)
	close(s.left)
	s.left = make(chan struct{})
}

// awaitSuccessor holds the term until the server shows another candidate
// queued behind its node, or no other worker is left to campaign: a term
// is always contended, so that an election that let that candidate lead
// at once would make it lead beside this one, with two round trips (the
// leader's fenced increment) to spare before this term ends.
func (s *electionState) awaitSuccessor(ctx context.Context, c *client.Client, term leaderTerm) error {
	_, name := client.SplitPath(term.Node())
	mine, _ := recipes.ParseNode(name, recipes.LatchKind)
	for {
		s.leftMu.Lock()
		left := s.left
		s.leftMu.Unlock()
		if s.running.Load() <= 1 {
			return nil
		}
		kids, _, w, err := c.ChildrenW(ctx, s.path)
		if err != nil {
			return err
		}
		for _, k := range kids {
			if n, ok := recipes.ParseNode(k, recipes.LatchKind); ok && mine.Before(n) {
				return nil
			}
		}
		select {
		case <-w:
		case <-left:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// worker campaigns until all terms have run.
func (s *electionState) worker(ctx context.Context, c *client.Client, id string, campaign campaignFunc) error {
	for {
		term, err := campaign(ctx)
		if err != nil {
			return err
		}
		open, err := s.log.begin(ctx, c, id, term)
		if err != nil {
			return err
		}
		n := s.started.Add(1)
		if n > s.terms {
			s.log.end(open)
			return term.Resign(ctx) // done: let the next worker in, to stop too
		}
		s.d.count(1)
		if !s.res.write(term.Token(), true) {
			return violationf("%s was refused right after it was elected: another leader wrote with a higher token", id)
		}
		if err := s.awaitSuccessor(ctx, c, term); err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		if n%crashEvery == 0 && n < s.terms {
			s.log.end(open) // before the server may elect the next leader
			if err := s.crash(ctx, c, term); err != nil {
				return err
			}
			continue // campaign again, under the client's new session
		}
		data, st, err := c.Get(ctx, s.counter)
		if err == nil {
			_, err = term.Multi(ctx, client.SetOp(s.counter, encode(decode(data)+1), st.Version))
		}
		if err == nil {
			s.increments.Add(1)
		}
		s.log.end(open)
		if rerr := term.Resign(ctx); err == nil {
			err = rerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
	}
}

// crash expires the leader's session on the server, as if its process had
// died, while the leader goes on writing as a zombie would: the resource
// accepts its writes only until the next leader has written, and ZooKeeper
// refuses its fenced write.
func (s *electionState) crash(ctx context.Context, c *client.Client, term leaderTerm) error {
	if err := s.d.expire(ctx, term.Session()); err != nil {
		return err
	}
	s.crashes.Add(1)
	for term.Err() == nil {
		s.res.write(term.Token(), false)
		select {
		case <-term.Done():
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The next leader writes as soon as it is elected; then the zombie's
	// token is stale.
	if err := waitFor(ctx, func() bool { return s.res.highest() > term.Token() }); err != nil {
		return errors.New("no leader followed the crashed one")
	}
	if s.res.write(term.Token(), false) {
		return violationf("the resource accepted the crashed leader's token %d after a higher one", term.Token())
	}
	var err error
	for {
		// The zombie's client may still be getting its new session.
		_, err = c.Multi(ctx, term.Guard(), client.SetOp(s.counter, encode(-1), -1))
		if ctx.Err() != nil || !client.IsRetryable(err) && !client.IsSessionLost(err) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	var me *client.MultiError
	if !errors.As(err, &me) {
		return violationf("ZooKeeper did not refuse the crashed leader's fenced write (%v)", err)
	}
	return nil
}

// tokenResource is a fenced resource: it accepts a write unless it has
// accepted a higher token, and records when a leader that must be current
// is refused.
type tokenResource struct {
	mu         sync.Mutex
	last       int64
	stale      int
	violations []string
}

// write offers a write with token and reports whether it was accepted;
// current says that the writer was just elected and must be accepted.
func (r *tokenResource) write(token int64, current bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if token < r.last {
		if current {
			r.violations = append(r.violations, fmt.Sprintf("token %d refused after %d", token, r.last))
		}
		r.stale++
		return false
	}
	if current && token == r.last {
		r.violations = append(r.violations, fmt.Sprintf("token %d elected twice", token))
	}
	r.last = token
	return true
}

func (r *tokenResource) highest() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *tokenResource) refusedStale() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stale
}

func (r *tokenResource) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.violations) == 0 {
		return nil
	}
	return violationf("%d violations, first: %s", len(r.violations), r.violations[0])
}

// termLog holds the interval of each term as its leader sees it: from the
// moment Campaign returned it to the moment the leader gave it up (just
// before Resign, or before the crash that expires its session). The server
// deletes a term's node only after its leader gave it up, and a correct
// election returns the next term only once that node is gone: intervals
// never overlap, whatever order the leaders' writes arrive in.
//
// A term that begins while another is open is checked against the
// server's view: the other term still held it if its node still exists
// (two nodes, so one of the two terms is not the lowest), or if its leader
// gave it up since. Otherwise the other term ended on the server before
// its leader noticed, the window the election's documentation warns of
// and fencing covers; that alone is no violation.
type termLog struct {
	mu   sync.Mutex
	open *openTerm // the term begun last, until its leader gives it up
}

// openTerm is one term's entry in a termLog.
type openTerm struct {
	id, node string
	token    int64
	ended    bool // its leader gave it up
}

// begin records that id's term t has begun, and returns a violation if
// another term was still held.
func (l *termLog) begin(ctx context.Context, c *client.Client, id string, t leaderTerm) (*openTerm, error) {
	o := &openTerm{id: id, node: t.Node(), token: t.Token()}
	l.mu.Lock()
	prev := l.open
	l.open = o
	l.mu.Unlock()
	if prev == nil {
		return o, nil
	}
	held, _, err := c.Exists(ctx, prev.node)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	held = held || prev.ended
	l.mu.Unlock()
	if held {
		return nil, violationf("%s was elected (token %d) while %s still led (token %d)", id, o.token, prev.id, prev.token)
	}
	return o, nil
}

// end records that o's leader gives its term up.
func (l *termLog) end(o *openTerm) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o.ended = true
	if l.open == o {
		l.open = nil
	}
}
