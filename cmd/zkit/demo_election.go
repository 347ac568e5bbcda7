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
)

// electionCrash: workers campaign for one leadership, each leading in
// turn, and every fifth leader crashes instead of resigning (its session
// expires on the server) and goes on writing as a zombie. Leaders write to
// a fenced resource and increment a counter znode through Term.Multi. One
// leader at a time: the resource never accepts a token below one it has
// accepted, no leader that still holds its term is refused, the crashed
// leaders' late writes are refused by the resource and by ZooKeeper, and
// every increment of a live term lands exactly once.
func electionCrash(ctx context.Context, d *demoEnv) (string, error) {
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
	s := &electionState{d: d, path: path, counter: counter, terms: int64(d.rounds)}
	d.startClock()
	errc := make(chan error, len(cs))
	for i, c := range cs {
		go func() { errc <- s.worker(ctx, c, fmt.Sprintf("worker-%d", i)) }()
	}
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
	return fmt.Sprintf("%d terms (%d ended by a crash), %.0f failovers/s, tokens increasing, %d zombie writes refused, counter = %d",
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
}

// worker campaigns until all terms have run.
func (s *electionState) worker(ctx context.Context, c *client.Client, id string) error {
	e := election.New(c, s.path, id)
	for {
		term, err := e.Campaign(ctx)
		if err != nil {
			return err
		}
		n := s.started.Add(1)
		if n > s.terms {
			return term.Resign(ctx) // done: let the next worker in, to stop too
		}
		s.d.count(1)
		if !s.res.write(term.Token(), true) {
			return violationf("%s was refused right after it was elected: another leader wrote with a higher token", id)
		}
		if n%crashEvery == 0 && n < s.terms {
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
func (s *electionState) crash(ctx context.Context, c *client.Client, term *election.Term) error {
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
