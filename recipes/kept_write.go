package recipes

import (
	"bytes"
	"context"
	"errors"

	"github.com/zkit-dev/zkit/client"
)

// Update replaces the node's data. While the node is present it writes it
// at once, conditionally on the version this process last wrote: a
// *ConflictError means someone else wrote in between. While it is not, the
// data is kept for the next creation and Update returns nil. A write whose
// reply is lost is resolved by reading the node back; if ctx ends first,
// Update returns an error matching client.ErrOutcomeUnknown (or ctx's
// error), and the next check or Update settles it: such a write, applied
// or not, is never taken for another process's.
func (k *Kept) Update(ctx context.Context, data []byte) error {
	if err := CheckData(k.c, "update", k.path, data); err != nil {
		return err
	}
	data = bytes.Clone(data)
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	k.mu.Lock()
	ended, p := k.endedLocked(), k.cur
	if ended == nil {
		k.data = data
	}
	k.mu.Unlock()
	if ended != nil {
		return Wrap("update", k.path, ended)
	}
	var b client.Backoff
	for p.Err() == nil {
		if pending := p.pending; pending != nil {
			// A write of this presence whose outcome is unknown: this
			// Update's, or an earlier one's whose ctx ended first. Settle
			// it before writing again, or the version it made would be
			// taken for another process's write.
			applied, err := k.settle(ctx, p)
			switch {
			case errors.Is(err, errRecreated):
				return nil // written when the node was created again
			case err != nil:
				return err
			case applied && bytes.Equal(pending, data):
				return nil
			}
			p.pending = nil // settled: not applied, or the node is gone
			continue
		}
		st, err := k.c.Set(ctx, k.path, data, p.version)
		switch {
		case err == nil:
			p.version, p.pending = st.Version, nil
			return nil
		case errors.Is(err, client.ErrBadVersion):
			// Written by someone else, or deleted and created again by
			// this Kept, whose claim has not made the new node current yet
			// (it waits for writeMu): the node read back tells.
			if _, err := k.settle(ctx, p); err != nil {
				if errors.Is(err, errRecreated) {
					return nil // the claim writes the data
				}
				return err
			}
			continue // gone (the next creation writes it), or a retry
		case errors.Is(err, client.ErrNoNode), client.IsSessionLost(err):
			return nil // written when the node is created again
		case client.IsOutcomeUnknown(err):
			p.pending = unsettled(data)
			if ctx.Err() != nil {
				return err
			}
			continue // settled first
		case !client.IsRetryable(err):
			return err
		}
		if err := b.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// errRecreated: the node was created again by this Kept (under a new
// session, or after a deletion) while a write to the last one was
// settled. Its claim, which waits for writeMu, writes the data then.
var errRecreated = errors.New("zkit: node created again by this process")

// settle reads the node back after a write whose outcome is unknown, and
// reports whether it was applied. It returns errRecreated when the node
// was created again by this Kept meanwhile: p has ended, and the write
// with it. Called with writeMu held.
func (k *Kept) settle(ctx context.Context, p *Presence) (bool, error) {
	var b client.Backoff
	for {
		if err := k.c.Sync(ctx, k.path); err == nil {
			data, st, err := k.c.Get(ctx, k.path)
			switch {
			case err == nil && (st.EphemeralOwner != p.sess.ID() || st.Czxid != p.token) && k.ownedBy(st.EphemeralOwner):
				return false, errRecreated
			case err == nil:
				return k.check(p, data, st)
			case errors.Is(err, client.ErrNoNode):
				return false, nil // the presence ends: the next creation writes it
			case !client.IsRetryable(err):
				return false, err
			}
		} else if !client.IsRetryable(err) {
			return false, err
		}
		if err := b.Wait(ctx); err != nil {
			return false, err
		}
	}
}

// ownedBy reports whether session is one under which this Kept created (or
// tried to create) the node.
func (k *Kept) ownedBy(session int64) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.owned[session]
}

// check compares what the node holds with what this process wrote: it
// reports whether the pending write (if any) was applied, and returns a
// *ConflictError when the node was written by someone else. Called with
// writeMu held.
func (k *Kept) check(p *Presence, data []byte, st *client.Stat) (bool, error) {
	switch {
	case st.EphemeralOwner != p.sess.ID() || st.Czxid != p.token:
		return false, &ConflictError{Path: k.path, Owner: st.EphemeralOwner, Reason: "created again by another session"}
	case k.opts.Shared:
		p.version, p.pending = st.Version, nil
		return false, nil
	case st.Version == p.version:
		return false, nil
	case p.pendingApplied(data, st):
		p.version, p.pending = st.Version, nil
		return true, nil
	}
	return false, &ConflictError{Path: k.path, Owner: p.sess.ID(), Reason: "written by another process"}
}

// recheck reads the node again after its data changed, and sets a new
// watch on it.
func (k *Kept) recheck(p *Presence) (<-chan client.WatchEvent, error) {
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	data, st, w, err := k.c.GetW(k.stopCtx, k.path)
	if err != nil {
		return nil, err
	}
	if _, err := k.check(p, data, st); err != nil {
		return nil, err
	}
	return w, nil
}
