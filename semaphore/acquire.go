package semaphore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
	"github.com/zkit-dev/zkit/recipes"
)

// maxDirCreates bounds how often an attempt creates the leases directory
// again because it went missing under the create of its nodes (the server
// reaping the emptied container, or someone deleting it).
const maxDirCreates = 4

// errRecount sends an attempt back to the mutex: its nodes counted more
// than Max leases (see attempt.hold).
var errRecount = errors.New("zkit: more leases than the maximum after the create")

// acquire takes n leases: an attempt, again if it had to give its nodes
// back (errRecount) or lost its session while it checked them (see
// attempt.hold: it held nothing yet, and tries again under the next
// session).
func (s *Semaphore) acquire(ctx context.Context, op string, n int, try bool) ([]*Lease, error) {
	if err := s.check(op, n); err != nil {
		return nil, err
	}
	for {
		leases, err := s.attempt(ctx, n, try)
		switch {
		case errors.Is(err, errRecount):
			s.cfg.Log().Warn("zkit: semaphore: more leases than the maximum: a participant created lease nodes without the mutex; trying again",
				"path", s.path, "max", s.max)
		case recipes.Requeueable(ctx, s.c, err):
			recipekit.InstrumentsOf(s.c).Requeued("semaphore")
			s.cfg.Log().Info("zkit: semaphore: session lost before the lease was held: trying again under the next session",
				"path", s.path, "cause", err)
		default:
			return leases, recipes.WaitError(ctx, s.c, err)
		}
	}
}

// attempt is one pass through the mutex: take it, wait for room, create the
// lease nodes and release it in one Multi, then check and hold them.
type attempt struct {
	s    *Semaphore
	t    *recipes.Ticket // the mutex node
	sess *client.Session // owns the mutex node and the lease nodes
	n    int
}

// attempt makes one. A session lost before its lease nodes are created
// (while it waits for the mutex or for room) costs it its place: it joins
// the mutex's queue again under the next session (recipes.Ticket.Rejoin).
// A try then goes on only if it need not wait there either.
func (s *Semaphore) attempt(ctx context.Context, n int, try bool) ([]*Lease, error) {
	t, err := s.mutex.Join(ctx, recipes.MutexKind, nil, s.cfg.ACL...)
	if err != nil {
		return nil, err
	}
	for {
		a := &attempt{s: s, t: t, n: n}
		paths, err := a.through(ctx, try)
		if err == nil {
			t.Consumed() // create deleted the mutex node
			return a.hold(ctx, paths)
		}
		if err = t.Rejoin(ctx, err); err != nil {
			t.Abandon(ctx)
			return nil, err
		}
	}
}

// through takes the mutex, waits for room and creates the lease nodes,
// releasing the mutex with them. On error the mutex node is the caller's
// to give up or to join again with.
func (a *attempt) through(ctx context.Context, try bool) ([]string, error) {
	switch {
	case try && a.t.Blocked():
		return nil, ErrNoLease
	case !try:
		if err := a.t.Wait(ctx); err != nil {
			return nil, err
		}
	}
	a.sess = a.t.Session()
	if err := a.room(ctx, try); err != nil {
		return nil, err
	}
	return a.create(ctx)
}

// room waits, holding the mutex, until the leases directory has room for
// n more: until the lease nodes there number at most Max - n. It watches
// the directory's children only once it has to wait, and only the holder
// of the mutex waits here, so a release wakes one process.
func (a *attempt) room(ctx context.Context, try bool) error {
	c := a.s.c
	watch := false
	var b client.Backoff
	for {
		var (
			children []string
			w        <-chan client.WatchEvent
			err      error
		)
		if watch {
			children, _, w, err = c.ChildrenW(ctx, a.s.leases)
		} else {
			children, _, err = c.Children(ctx, a.s.leases)
		}
		switch {
		case errors.Is(err, client.ErrNoNode):
			return nil // no lease is held: the first create makes the directory
		case client.IsRetryable(err):
			if err := recipes.Pause(ctx, a.s.c, a.sess, &b); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		b.Reset()
		if countLeases(children, math.MaxInt64)+a.n <= a.s.max {
			return nil
		}
		if try {
			return ErrNoLease
		}
		if !watch {
			watch = true // list again with a watch: a release may have come meanwhile
			continue
		}
		a.s.cfg.Log().Debug("zkit: semaphore: holding its mutex, waiting for a lease",
			"path", a.s.path, "held", countLeases(children, math.MaxInt64), "max", a.s.max)
		select {
		case ev := <-w:
			if ev.Type == client.EventNotWatching {
				return recipes.LostSession(a.s.c, ev.Err)
			}
		case <-a.sess.Done():
			return recipes.LostSession(a.s.c, a.sess.Err())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// createOps is the Multi of an attempt that holds the mutex node at
// mutex: the creates of n lease nodes, with new protection ids (returned),
// and the release of the mutex.
func (s *Semaphore) createOps(n int, mutex string) ([]string, []client.Op) {
	ids := make([]string, n)
	ops := make([]client.Op, 0, n+2)
	for i := range ids {
		ids[i] = client.NewProtectedID()
		name := client.ProtectedName(ids[i], leaseKind.Marker)
		ops = append(ops, client.CreateOp(client.JoinPath(s.leases, name), s.cfg.data, client.EphemeralSequential, s.cfg.ACL...))
	}
	// The release signal, as a lock's Unlock sends it: a zkit waiter for
	// the mutex holds on it without listing the directory again.
	return ids, append(ops, client.SetOp(mutex, nil, -1), client.DeleteOp(mutex, -1))
}

// create creates the n lease nodes and releases the mutex in one Multi:
// the next holder of the mutex counts them. On error the lease nodes are
// deleted if the Multi may have been applied; the mutex node is the
// caller's (see through).
func (a *attempt) create(ctx context.Context) ([]string, error) {
	s := a.s
	ids, ops := s.createOps(a.n, a.t.Path())
	var b client.Backoff
	for dirs := 0; ; {
		if !a.sess.Alive() {
			return nil, recipes.LostSession(a.s.c, a.sess.Err())
		}
		res, err := s.c.Multi(ctx, ops...)
		var me *client.MultiError
		switch {
		case err == nil:
			paths := make([]string, a.n)
			for i := range paths {
				paths[i] = res[i].Path
			}
			return paths, nil
		case errors.As(err, &me) && me.Index >= 0 && me.Index < a.n && errors.Is(err, client.ErrNoNode):
			// The leases directory is missing: never created, or an
			// emptied container the server reaped.
			if dirs == maxDirCreates {
				return nil, fmt.Errorf("zkit: %s went missing %d times: %w", s.leases, dirs+1, err)
			}
			dirs++
			if err := s.checkPath(ctx); err != nil {
				return nil, err
			}
			if err := recipes.CreateDir(ctx, s.c, s.leases, s.cfg.CreateOptions()...); err != nil {
				return nil, err
			}
			continue
		case errors.As(err, &me) && me.Index >= a.n && errors.Is(err, client.ErrNoNode):
			return nil, a.gone() // the mutex node: nothing was applied
		case client.IsOutcomeUnknown(err):
			paths, applied, rerr := a.resolve(ctx, ids)
			switch {
			case rerr != nil:
				recipekit.RemoveProtected(ctx, s.c, a.sess, s.leases, ids, recipekit.Removal{Logger: s.cfg.Logger})
				return nil, rerr
			case applied:
				return paths, nil
			}
			continue // not applied: the mutex is still held
		case client.IsRetryable(err):
			if err := recipes.Pause(ctx, a.s.c, a.sess, &b); err != nil {
				return nil, err
			}
			continue
		}
		return nil, err
	}
}

// resolve finds out whether the Multi of create, whose reply was lost,
// was applied: after a sync, the mutex node is still there if it was not
// (the Multi deletes it), and the lease nodes with ids are there if it
// was. Anything else means the session or the mutex node was lost.
func (a *attempt) resolve(ctx context.Context, ids []string) (paths []string, applied bool, err error) {
	var b client.Backoff
	for {
		if !a.sess.Alive() {
			return nil, false, recipes.LostSession(a.s.c, a.sess.Err())
		}
		paths, applied, err = a.lookup(ctx, ids)
		if err == nil || !client.IsRetryable(err) {
			return paths, applied, err
		}
		if err := recipes.Pause(ctx, a.s.c, a.sess, &b); err != nil {
			return nil, false, err
		}
	}
}

// lookup is one try of resolve.
func (a *attempt) lookup(ctx context.Context, ids []string) ([]string, bool, error) {
	c := a.s.c
	if err := c.Sync(ctx, a.t.Path()); err != nil && !errors.Is(err, client.ErrNoNode) {
		return nil, false, err
	}
	ok, _, err := c.Exists(ctx, a.t.Path())
	if err != nil {
		return nil, false, err
	}
	if ok {
		return nil, false, nil
	}
	children, _, err := c.Children(ctx, a.s.leases)
	if err != nil && !errors.Is(err, client.ErrNoNode) {
		return nil, false, err
	}
	paths := make([]string, len(ids))
	found := 0
	for _, ch := range children {
		if id, _, ok := client.ParseProtected(ch); ok {
			if i := slices.Index(ids, id); i >= 0 {
				paths[i] = client.JoinPath(a.s.leases, ch)
				found++
			}
		}
	}
	if found != len(ids) {
		return nil, false, a.gone()
	}
	return paths, true, nil
}

// hold checks the created nodes and turns them into leases. It reads each
// node with a watch (which gives its token and ends its lease when it
// goes) while it lists the directory once more: the nodes created before
// the newest of its own, its own included, must number at most Max.
//
// That listing is what makes the semaphore safe whatever other processes
// do. Of the leases held at any moment, take the one whose node was
// created last: the listing its holder made after creating it showed
// every other one (they were created before, and are still there), so
// they are at most Max. The mutex only keeps the count from overshooting
// while nobody can go on (every process waiting with a node made too
// many); it is not what bounds the holders. A listing that shows too many
// means someone created a node without holding the mutex: the attempt
// gives its nodes back and starts over (errRecount).
func (a *attempt) hold(ctx context.Context, paths []string) ([]*Lease, error) {
	s := a.s
	type watched struct {
		st   *client.Stat
		self <-chan client.WatchEvent
		err  error
	}
	ws := make([]watched, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() {
			var b client.Backoff
			for {
				_, ws[i].st, ws[i].self, ws[i].err = s.c.GetW(ctx, p)
				if !client.IsRetryable(ws[i].err) || recipes.Pause(ctx, a.s.c, a.sess, &b) != nil {
					return
				}
			}
		})
	}
	count, err := a.count(ctx, paths)
	wg.Wait()
	for _, w := range ws {
		if err == nil && w.err != nil {
			err = w.err
			if errors.Is(err, client.ErrNoNode) {
				err = a.gone()
			}
		}
		if err == nil && w.st.EphemeralOwner != a.sess.ID() {
			err = recipes.LostSession(a.s.c, nil)
		}
	}
	if err == nil && count > s.max {
		err = errRecount
	}
	if err != nil {
		for i, p := range paths {
			recipes.Remove(ctx, s.c, a.owner(ws[i].st), p, recipes.Removal{Logger: s.cfg.Logger})
		}
		return nil, err
	}
	o := s.cfg.Lease()
	o.Recipe = "semaphore"
	o.PlainRelease = true
	leases := make([]*Lease, len(paths))
	for i, p := range paths {
		leases[i] = recipes.NewLease(s.c, a.sess, p, ws[i].st, ws[i].self, o)
	}
	return leases, nil
}

// owner is the session that owns a lease node of the attempt whose Stat is
// st (nil if it could not be read): the attempt's, or the client's next
// one (see recipekit.NewerOwner), under which a node left would hold a lease.
func (a *attempt) owner(st *client.Stat) *client.Session {
	if s := recipekit.NewerOwner(a.s.c, a.sess, st); s != nil {
		return s
	}
	return a.sess
}

// count lists the leases directory and counts the lease nodes created no
// later than the newest of paths (recipes.Node.Created: creation order, a
// wrapped counter's too).
func (a *attempt) count(ctx context.Context, paths []string) (int, error) {
	var newest int64 = -1
	for _, p := range paths {
		_, name := client.SplitPath(p)
		n, ok := recipes.ParseNode(name, leaseKind)
		if !ok {
			return 0, fmt.Errorf("zkit: created %q, which is not a lease node", p)
		}
		newest = max(newest, n.Created())
	}
	var b client.Backoff
	for {
		children, _, err := a.s.c.Children(ctx, a.s.leases)
		switch {
		case errors.Is(err, client.ErrNoNode):
			return 0, a.gone()
		case client.IsRetryable(err):
			if err := recipes.Pause(ctx, a.s.c, a.sess, &b); err != nil {
				return 0, err
			}
			continue
		case err != nil:
			return 0, err
		}
		return countLeases(children, newest), nil
	}
}

// countLeases counts the lease nodes among children created no later
// than upTo (recipes.Node.Created).
func countLeases(children []string, upTo int64) int {
	n := 0
	for _, ch := range children {
		if node, ok := recipes.ParseNode(ch, leaseKind); ok && node.Created() <= upTo {
			n++
		}
	}
	return n
}

// gone reports the attempt's mutex node or a lease node missing before
// the attempt held anything: lost with the session, or deleted by someone.
func (a *attempt) gone() error {
	if !a.sess.Alive() {
		return recipes.LostSession(a.s.c, a.sess.Err())
	}
	return recipes.DeletedWhileWaiting(a.s.path)
}
