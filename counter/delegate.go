package counter

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
)

// Delegation: writers apply each other's deltas.
//
// Under contention one writer wins each version and the others lose
// their writes. The writer that has just won could write again at once
// from the version its write returned, while a loser needs a read first:
// left alone, the winner wins nearly every race and the losers wait for a
// lucky moment. Taking turns fixes the order but not the cost: a handover
// needs a read, since a watch event carries no data.
//
// So a batch of adds whose write lost does not write again. It leaves its
// delta for the writers, in a protected ephemeral sequential child of the
// counter's node named "_c_<id>-<delta>-add-<seq>", and waits on that node.
// Every reply about the node carries its number of children, so every
// zkit writer learns for free that deltas wait: it lists them and applies
// them, oldest first, after its own calls, with the same write, one multi:
// setData on the counter at the version its value was computed from, and
// setData on each delta's node, at version 0, with the value right after
// that delta. A node's version is its applied flag: it goes from 0 to 1
// only with the counter's write, so a delta is applied once, by whichever
// writer gets there first. The waiter's watch fires, it reads its result
// from its node, and deletes the node.
//
// A session whose last batch was applied by another writer leaves its
// next batch at once, without reading and losing a write first: while the
// contention lasts, one writer applies everybody's deltas, one write for
// many increments, and the p99 of an increment is a few round trips.
//
// A delta not applied within servePatience (no zkit writer is writing:
// Curator or kazoo clients, or nobody) is taken back with a delete at
// version 0, and the batch writes itself; if that delete fails, the delta
// was applied meanwhile. A waiter whose node vanishes (its session ended)
// or whose caller gives up cannot tell whether its delta was applied: its
// calls end with an error matching client.ErrOutcomeUnknown, as a write
// whose reply was lost does. So do the calls of a batch whose node's
// create lost its reply and CreateProtected could not find out whether it
// was applied (the client gave the session up first): the node may be
// there, for another writer to apply, until the server expires the
// session. The batch takes it back before its calls end, so that it was
// applied by then or never is. Correctness never depends on who applies a
// delta: every write is still conditional, and Curator and kazoo clients
// (which leave no deltas and apply none) count correctly beside zkit's.
//
// While deltas wait the node cannot be deleted (the server refuses to
// delete a node with children). Where the client may not create children
// in the node (its ACL), a batch leaves nothing and retries after a
// random wait instead.
const servePatience = 20 * time.Millisecond

// errServedElsewhere reports a serving write refused because one of the
// deltas in it was gone or applied by another writer: write again without
// it.
var errServedElsewhere = errors.New("zkit: counter delta applied elsewhere")

// delegation is a delta left in the node by another batch.
type delegation struct {
	name   string
	delta  int64
	result int64 // the counter's value right after it, in this write
}

// deltaKind is the shape of a node leaving a delta (layout.DeltaMarker):
// its creation order is the order the deltas apply in.
var deltaKind = recipes.Kind{Marker: layout.DeltaMarker, Exclusive: true, Recipe: layout.Counter.Name}

// addName is the name (before the sequence number) of a node leaving
// delta.
func addName(delta int64) string {
	return strconv.FormatInt(delta, 10) + "-" + deltaKind.Marker
}

// parseAdd returns the delta a child of the node leaves, if it is one.
func parseAdd(name string) (int64, bool) {
	if _, ok := recipes.ParseNode(name, deltaKind); !ok {
		return 0, false
	}
	_, rest, ok := client.ParseProtected(name)
	if !ok {
		return 0, false
	}
	i := strings.LastIndex(rest, "-"+deltaKind.Marker)
	if i < 0 {
		return 0, false
	}
	d, err := strconv.ParseInt(rest[:i], 10, 64)
	return d, err == nil
}

// delegations lists the deltas waiting in the node that this engine has
// not found applied, oldest first, with their results after own: as many
// as the encoding can take.
func (e *engine) delegations(ctx context.Context, own int64) []delegation {
	kids, _, err := e.c.Children(ctx, e.path)
	if err != nil {
		return nil // the write will tell
	}
	live := make(map[string]bool, len(kids))
	var ds []delegation
	val := own
	for _, n := range recipes.SortNodes(kids, deltaKind) {
		live[n.Name] = true
		d, ok := parseAdd(n.Name)
		if !ok || e.served[n.Name] {
			continue
		}
		next, ok := e.enc.add(val, d)
		if !ok {
			break // its owner takes it back and gets the overflow itself
		}
		val = next
		ds = append(ds, delegation{n.Name, d, val})
	}
	for name := range e.served {
		if !live[name] {
			delete(e.served, name)
		}
	}
	return ds
}

// writeServing stores the value after the batch's calls and ds (the last
// delegation's result) if the node is still as v says, marking each
// delegation applied, and returns the data it wrote to the counter.
func (e *engine) writeServing(ctx context.Context, v view, ds []delegation) ([]byte, stamp, error) {
	data := e.enc.encode(ds[len(ds)-1].result)
	ops := make([]client.Op, 0, 1+len(ds))
	ops = append(ops, client.SetOp(e.path, data, v.version))
	for _, d := range ds {
		ops = append(ops, client.SetOp(client.JoinPath(e.path, d.name), encodeResult(d.result), 0))
	}
	res, err := e.c.Multi(ctx, ops...)
	var me *client.MultiError
	if errors.As(err, &me) && me.Index >= 1 {
		e.served[ds[me.Index-1].name] = true // gone, or applied by another writer
		return data, stamp{}, errServedElsewhere
	}
	if err != nil {
		return data, stamp{}, err
	}
	for _, d := range ds {
		e.served[d.name] = true
	}
	e.applied.Add(int64(len(ds)))
	e.setView(data, res[0].Stat)
	e.pace.won()
	return data, stamp{res[0].Stat.Mzxid, res[0].Stat.Version}, nil
}

// encodeResult is a delegation node's data once applied: the counter's
// value right after its delta, 8 bytes big-endian whatever the counter's
// encoding.
func encodeResult(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// delegateBatch leaves the adds of calls (total) for the writers to apply
// and waits. It reports false when the batch must write itself: the node
// could not be created (it is not left for anyone then), or no writer
// applied it within servePatience and it was taken back. A create whose
// outcome stays unknown may have left the node, for any writer to apply:
// the batch does not write itself then. Otherwise it
// returns the calls' results: their values, or errors matching
// client.ErrOutcomeUnknown when the outcome cannot be known.
func (e *engine) delegateBatch(ctx context.Context, calls []*call, total int64, pause *client.Backoff) ([]result, bool) {
	val, zxid, state, err := e.delegate(ctx, total, pause)
	switch state {
	case notLeft, takenBack:
		e.delegating = false
		return nil, false
	case lostTrack:
		e.delegating = false
		return unknown(calls, e.path, err), true
	}
	e.delegating = true
	e.delegated.Add(1)
	res := make([]result, len(calls))
	base := val - total
	for i, cl := range calls {
		base += cl.a
		res[i].value = base
	}
	return stamped(res, stamp{zxid, -1}), true
}

// delegateState is how a delegation ended.
type delegateState int

const (
	applied   delegateState = iota // another writer applied it
	notLeft                        // the node could not be created: nothing left
	takenBack                      // not applied in time, and taken back
	lostTrack                      // may or may not have been applied
)

// delegate leaves delta in a new node, waits for it to be applied, and
// returns the counter's value right after it and the zxid of the write
// that applied it (the node's, written in the same transaction).
func (e *engine) delegate(ctx context.Context, delta int64, pause *client.Backoff) (int64, int64, delegateState, error) {
	sess := e.c.Session()
	p, err := e.c.CreateProtected(ctx, client.JoinPath(e.path, addName(delta)), nil, client.EphemeralSequential)
	switch {
	case client.IsOutcomeUnknown(err):
		// A lost reply CreateProtected could not resolve (the session
		// was lost, or ctx ended, first): the node may be there, owned
		// by a session the server has not expired yet, and another
		// writer may apply it before it goes. Take it back before the
		// calls end, so that it is applied by now or never.
		if werr := e.withdraw(ctx, sess.ID(), delta, pause); werr != nil {
			err = fmt.Errorf("%w (and taking the delta back failed: %v)", err, werr)
		}
		return 0, 0, lostTrack, err
	case err != nil:
		return 0, 0, notLeft, nil // a create that failed left nothing
	}
	defer func() {
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		_ = recipes.Remove(ended, e.c, sess, p, recipes.Removal{}) // in the background
	}()
	deadline := time.Now().Add(servePatience)
	tookBack := false // a delete at version 0 was sent, its outcome not known
	watch := true     // read with a watch: nothing says the node changed yet
	for {
		var (
			data []byte
			st   *client.Stat
			ch   <-chan client.WatchEvent
			err  error
		)
		if watch {
			data, st, ch, err = e.c.GetW(ctx, p)
		} else {
			data, st, err = e.c.Get(ctx, p)
		}
		switch {
		case err == nil && st.Version > 0:
			if len(data) != 8 {
				return 0, 0, lostTrack, fmt.Errorf("zkit: counter delta node %q holds %d bytes, want 8", p, len(data))
			}
			return int64(binary.BigEndian.Uint64(data)), st.Mzxid, applied, nil
		case errors.Is(err, client.ErrNoNode) && tookBack && e.c.Session() == sess:
			return 0, 0, takenBack, nil // our delete at version 0 went through
		case errors.Is(err, client.ErrNoNode):
			return 0, 0, lostTrack, fmt.Errorf("zkit: counter delta node %q gone before it was applied or taken back: %w", p, err)
		case client.IsRetryable(err):
			if err := pause.Wait(ctx); err != nil {
				return 0, 0, lostTrack, err
			}
			continue
		case err != nil:
			return 0, 0, lostTrack, err
		}
		if !watch {
			watch = true // not applied after all: wait again
			continue
		}
		if wait(ctx, ch, time.Until(deadline)) {
			watch = false // applied, or gone: a plain read tells
			continue
		}
		if err := ctx.Err(); err != nil {
			return 0, 0, lostTrack, err
		}
		// Take it back, unless it was applied meanwhile.
		err = e.c.Delete(ctx, p, 0)
		switch {
		case err == nil:
			return 0, 0, takenBack, nil
		case errors.Is(err, client.ErrBadVersion):
			watch = false // applied meanwhile: a plain read gets the result
		case client.IsOutcomeUnknown(err), client.IsRetryable(err):
			tookBack = true
			if err := pause.Wait(ctx); err != nil {
				return 0, 0, lostTrack, err
			}
		default:
			return 0, 0, lostTrack, err
		}
	}
}

// withdraw takes back (deletes at version 0) every delta of delta not yet
// applied in a node that session owns: the node of a create whose outcome
// is unknown, which the server keeps, for any writer to apply, until it
// expires the session, even one the client gave up. It cannot tell that
// node from another delta of the same size that session left, whose
// waiter then ends as unknown too. It retries through connection trouble
// while ctx lasts.
func (e *engine) withdraw(ctx context.Context, session, delta int64, pause *client.Backoff) error {
	for {
		err := e.withdrawOnce(ctx, session, delta)
		switch {
		case err == nil, errors.Is(err, client.ErrNoNode):
			return nil
		case !client.IsRetryable(err) && !client.IsOutcomeUnknown(err):
			return err
		}
		if err := pause.Wait(ctx); err != nil {
			return err
		}
	}
}

func (e *engine) withdrawOnce(ctx context.Context, session, delta int64) error {
	if err := e.c.Sync(ctx, e.path); err != nil {
		return err
	}
	kids, _, err := e.c.Children(ctx, e.path)
	if err != nil {
		return err
	}
	for _, name := range kids {
		if d, ok := parseAdd(name); !ok || d != delta {
			continue
		}
		p := client.JoinPath(e.path, name)
		ok, st, err := e.c.Exists(ctx, p)
		if err != nil {
			return err
		}
		if !ok || st.EphemeralOwner != session || st.Version != 0 {
			continue
		}
		if err := e.c.Delete(ctx, p, 0); err != nil && !errors.Is(err, client.ErrNoNode) && !errors.Is(err, client.ErrBadVersion) {
			return err // a delete whose outcome is unknown is tried again
		}
	}
	return nil
}

// wait waits up to d for ch, and reports whether it fired.
func wait(ctx context.Context, ch <-chan client.WatchEvent, d time.Duration) bool {
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
