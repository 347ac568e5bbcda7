package counter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
)

// view is the counter node as this engine last saw it: read, or written by
// itself.
type view struct {
	known    bool
	exists   bool
	data     []byte
	value    int64
	bad      bool  // data does not decode
	version  int32 // the node's data version
	czxid    int64 // which incarnation of the node; 0 when not known
	mzxid    int64 // the last write's zxid; 0 when not known
	children int32 // the node's children: deltas left to apply (delegate.go)
	at       time.Time
}

// apply applies calls, in order, with one conditional write, and returns
// their results. It retries on conflicts (another writer got in first)
// and on writes known not to have been applied; everything else ends the
// batch with the same error for every call.
//
// The write is a setData with the version of the value it was computed
// from (a create when the node is missing), so it is applied only if the
// node is still what the calls were applied to: the paper's compare-and-
// set. It starts from the engine's view when that is probably current (the
// view after this engine's own last write, while other writers are quiet),
// saving a read; a stale view costs one failed write.
//
// A batch that changes nothing (gets, a compareAndSet that does not match,
// deltas that cancel out) is answered from a read made during the batch,
// after a sync, without writing.
func (e *engine) apply(ctx context.Context, calls []*call) []result {
	conflicts := 0
	defer func() {
		instrumentsOf(e.c).applied(len(calls), conflicts)
		for _, cl := range calls { // for the callers' spans
			cl.combined, cl.conflicts = len(calls), conflicts
		}
	}()
	// fresh: the view was read during this batch, after a sync or after a
	// failed write of this session, so it is no older than the calls.
	// failed: a write of this batch failed (reads after it are fresh).
	fresh, failed := false, false
	gets := true // only gets: the first read might as well be synced
	addOnly, total := true, int64(0)
	for _, cl := range calls {
		gets = gets && cl.kind == opGet
		addOnly = addOnly && cl.kind == opAdd
		total += cl.a
	}
	start := time.Now()
	log := calls[0].log
	var pause client.Backoff // for connection trouble
	if addOnly && e.delegating {
		// The last batch was applied by another writer: contention goes
		// on, and a write of our own would most likely lose.
		if res, ok := e.delegateBatch(ctx, calls, total, &pause); ok {
			return res
		}
	}
	for {
		if !e.view.known || e.pace.stale(e.view) {
			if err := e.read(ctx, gets, &pause); err != nil {
				return fail(calls, err)
			}
			fresh = failed || gets
		}
		v := e.view
		if v.bad {
			if !fresh {
				if err := e.read(ctx, true, &pause); err != nil {
					return fail(calls, err)
				}
				fresh = true
				continue
			}
			return fail(calls, &DataError{Path: e.path, Encoding: e.enc, Len: len(v.data)})
		}
		cur := state{v.value, v.exists}
		next, res := cur, make([]result, len(calls))
		for i, cl := range calls {
			next, res[i] = cl.apply(next, e.enc, e.path)
		}
		if next == cur {
			if fresh {
				return stamped(res, stamp{v.mzxid, v.version}) // answered from this read
			}
			if err := e.read(ctx, true, &pause); err != nil {
				return fail(calls, err)
			}
			fresh = true
			continue
		}

		// Deltas left by other writers (delegate.go) go with this write.
		var ds []delegation
		if v.exists && v.children > 0 {
			ds = e.delegations(ctx, next.value)
		}
		data := e.enc.encode(next.value)
		var (
			st  stamp
			err error
		)
		if len(ds) > 0 {
			// Read back, should the reply be lost, against what was
			// written: ours and theirs.
			data, st, err = e.writeServing(ctx, v, ds)
		} else {
			st, err = e.write(ctx, v, data, calls[0].create)
		}
		switch {
		case err == nil:
			return stamped(res, st)
		case errors.Is(err, errServedElsewhere):
			// A delegation was gone or applied: write again without it.
		case errors.Is(err, client.ErrBadVersion), errors.Is(err, client.ErrNodeExists):
			// Another writer got in first. A batch of adds leaves its
			// delta for the writers to apply (delegate.go); others read
			// again (our session's read after the failed write sees at
			// least what made it fail) after a wait.
			log.Debug("zkit: counter write conflict", "path", e.path, "version", v.version)
			e.view.known, failed = false, true
			conflicts++
			if addOnly {
				if res, ok := e.delegateBatch(ctx, calls, total, &pause); ok {
					return res
				}
			}
			if err := e.pace.conflict(ctx, time.Since(start)); err != nil {
				return fail(calls, err) // nothing of this batch was applied
			}
		case errors.Is(err, client.ErrNoNode) && v.exists:
			e.view = view{known: true, at: time.Now()}
			fresh, failed = true, true
		case errors.Is(err, client.ErrNoNode):
			// The parent is missing: create it, as Curator does, with the
			// counter's ACL. Creating a parent twice is harmless, so
			// trouble doing it is retried.
			perr := e.c.EnsurePath(ctx, parent(e.path), calls[0].create...)
			if perr != nil && !client.IsOutcomeUnknown(perr) && !client.IsRetryable(perr) {
				return fail(calls, perr)
			}
			if perr != nil && pause.Wait(ctx) != nil {
				return fail(calls, ctx.Err())
			}
		case client.IsRetryable(err):
			if err := pause.Wait(ctx); err != nil {
				return fail(calls, err)
			}
		case client.IsOutcomeUnknown(err) && ctx.Err() == nil:
			log.Warn("zkit: counter write outcome unknown; reading back", "path", e.path, "err", err)
			ok, rerr := e.notApplied(ctx, v, data, &pause)
			if rerr != nil || !ok {
				e.view.known = false
				if rerr != nil {
					err = fmt.Errorf("%w (and reading back failed: %v)", err, rerr)
				}
				return unknown(calls, e.path, err)
			}
			fresh = true
		case client.IsOutcomeUnknown(err):
			e.view.known = false
			return unknown(calls, e.path, err)
		default:
			return fail(calls, err)
		}
	}
}

// write stores data if the node is still as v says, and updates the view.
func (e *engine) write(ctx context.Context, v view, data []byte, create []client.CreateOption) (stamp, error) {
	if !v.exists {
		// The create's reply carries the node's Stat: its czxid resolves
		// a later write whose reply is lost. A node this engine created
		// is a counter's (see check).
		_, st, err := e.c.CreateStat(ctx, e.path, data, client.Persistent, create...)
		if err != nil {
			return stamp{}, err
		}
		e.setView(data, st)
		e.checked = st.Czxid
		e.pace.won()
		return stamp{st.Mzxid, st.Version}, nil
	}
	st, err := e.c.Set(ctx, e.path, data, v.version)
	if err != nil {
		return stamp{}, err
	}
	e.setView(data, st)
	e.pace.won()
	return stamp{st.Mzxid, st.Version}, nil
}

func (e *engine) setView(data []byte, st *client.Stat) {
	val, ok := e.enc.decode(data)
	e.view = view{known: true, exists: true, data: data, value: val, bad: !ok,
		version: st.Version, czxid: st.Czxid, mzxid: st.Mzxid, children: st.NumChildren, at: time.Now()}
}

// stamp is which write applied a batch, or which state of the node
// answered a batch that changes nothing: its zxid (0 when not known: a
// node that does not exist) and the node's version.
type stamp struct {
	zxid    int64
	version int32
}

// stamped marks res as applied by the write st.
func stamped(res []result, st stamp) []result {
	for i := range res {
		res[i].zxid, res[i].version = st.zxid, st.version
	}
	return res
}

// read loads the node into the view, after a sync when sync is set,
// retrying while the connection is down.
func (e *engine) read(ctx context.Context, sync bool, pause *client.Backoff) error {
	for {
		var err error
		if sync {
			err = e.c.Sync(ctx, e.path)
			if errors.Is(err, client.ErrNoNode) {
				err = nil // sync works on paths that do not exist too; be lenient
			}
		}
		var data []byte
		var st *client.Stat
		if err == nil {
			data, st, err = e.c.Get(ctx, e.path)
		}
		if err == nil && st.Czxid != e.checked {
			err = e.check(ctx, st)
		}
		switch {
		case err == nil:
			e.pace.observe(e.view, st)
			e.setView(data, st)
			return nil
		case errors.Is(err, client.ErrNoNode):
			e.view = view{known: true, at: time.Now()}
			return nil
		case !client.IsRetryable(err):
			return err
		}
		if err := pause.Wait(ctx); err != nil {
			return err
		}
	}
}

// check refuses, with an error matching recipes.ErrOtherRecipe, a node
// that is another recipe's, before anything is written to it, as the
// counter's layout refuses it (layout.Counter): an ephemeral node (a
// rendezvous's zr, a member's node), the directory of a lock, read/write
// lock, election or semaphore (its container would be deleted by the
// server, value and all, once the other recipe leaves it empty), or a
// double barrier's directory while its round is open (the barrier reads
// the directory's data). It lists the children only of a node that has
// some, once per node (its czxid).
func (e *engine) check(ctx context.Context, st *client.Stat) error {
	seen := layout.Sighting{Path: e.path, Stat: st}
	if st.NumChildren > 0 {
		kids, _, err := e.c.Children(ctx, e.path)
		if err != nil {
			return err
		}
		seen.Children = layout.Listed(e.path, kids).Children
	}
	if err := layout.Counter.Check(seen); err != nil {
		return err
	}
	e.checked = st.Czxid
	return nil
}

// notApplied reads the node back after a write from view v whose reply
// was lost, and reports whether the write is known not to have been
// applied: then the view is the node as it is now, and the calls can be
// applied again. A write that was not applied cannot be applied later (its
// version or create condition no longer holds, and a request still in
// flight on the old connection is refused once the session moved).
//
// Known not applied: the node is still at v's version (same incarnation);
// or it is one version further but holds other data than ours; or, for a
// create, it exists at version 0 with other data. Anything else (our data
// one version on, which another writer may have written too; several
// versions on; the node gone) is unknown.
func (e *engine) notApplied(ctx context.Context, v view, data []byte, pause *client.Backoff) (bool, error) {
	if err := e.read(ctx, true, pause); err != nil {
		return false, err
	}
	now := e.view
	if !now.exists {
		return false, nil
	}
	if !v.exists {
		return now.version == 0 && !bytes.Equal(now.data, data), nil
	}
	if v.czxid == 0 || now.czxid != v.czxid {
		return false, nil
	}
	return now.version == v.version || (now.version == v.version+1 && !bytes.Equal(now.data, data)), nil
}

func fail(calls []*call, err error) []result {
	res := make([]result, len(calls))
	for i := range res {
		res[i].err = err
	}
	return res
}

func unknown(calls []*call, path string, err error) []result {
	cause := err
	if ou, ok := err.(*client.OutcomeUnknownError); ok {
		cause = ou.Err
	}
	res := make([]result, len(calls))
	for i, cl := range calls {
		res[i].err = cl.unknown(path, cause)
	}
	return res
}

// parent is the path of p's parent node.
func parent(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}
