package recipes

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// establish makes the node present under the current session: it creates
// it, or adopts it when the current session already owns it, and sets a
// watch on it. It retries while the connection or the session is being
// replaced, until ctx ends.
//
// When it fails, on whatever path (ctx ended while a claim waited for the
// connection, a claim failed, ...), it deletes the node that a create of
// its own may have made under the last session it tried, or that it found
// written by another process when it came to adopt it, now if the session
// owns it, else in the background (see Remove): nobody holds that node,
// and nothing else would delete it before the session ends.
func (k *Kept) establish(ctx context.Context) (_ *Presence, _ <-chan client.WatchEvent, err error) {
	var opts []client.CreateOption
	if len(k.opts.ACL) > 0 {
		opts = append(opts, client.WithACL(k.opts.ACL...))
	}
	var tried *client.Session // the last session a create of ours may have been applied under
	defer func() {
		if err != nil && tried != nil {
			k.removeNode(done, tried)
		}
	}()
	var b client.Backoff
	for {
		if err := k.c.Context().Err(); err != nil {
			return nil, nil, LostSession(k.c, nil)
		}
		sess := k.c.Session()
		if sess == nil || !sess.Alive() {
			if err := k.backOff(ctx, &b); err != nil {
				return nil, nil, err
			}
			continue
		}
		k.mu.Lock()
		data := k.data
		// From here on a node owned by sess may be this process's.
		k.owned[sess.ID()] = true
		k.mu.Unlock()
		_, err := k.c.Create(ctx, k.path, data, client.Ephemeral, opts...)
		if err == nil || client.IsOutcomeUnknown(err) {
			tried = sess // the create may have been applied
		}
		switch {
		case err == nil, errors.Is(err, client.ErrNodeExists), client.IsOutcomeUnknown(err) && ctx.Err() == nil:
			p, w, err := k.claim(ctx, sess)
			switch {
			case err == nil:
				return p, w, nil
			case errors.Is(err, errTryAgain), client.IsRetryable(err), client.IsSessionLost(err) && !errors.Is(err, client.ErrClosed):
			case client.IsOutcomeUnknown(err) && ctx.Err() == nil:
				// The claim's write of the data lost its reply: the next
				// claim reads the node again, and writes it if need be.
			case errors.Is(err, ErrConflict):
				// Written by another process: leave the name to it, and
				// delete the node if sess owns it (adopted, not created).
				tried = sess
				return nil, nil, err
			default:
				return nil, nil, err
			}
		case client.IsOutcomeUnknown(err):
			return nil, nil, ctx.Err()
		case errors.Is(err, client.ErrNoNode):
			parent, _ := client.SplitPath(k.path)
			var err error
			if k.opts.ParentContainer {
				err = CreateDir(ctx, k.c, parent, opts...)
			} else {
				err = k.c.EnsurePath(ctx, parent)
			}
			if err != nil {
				return nil, nil, err
			}
			continue
		case client.IsRetryable(err), client.IsSessionLost(err) && !errors.Is(err, client.ErrClosed):
		default:
			return nil, nil, err
		}
		if err := k.backOff(ctx, &b); err != nil {
			return nil, nil, err
		}
	}
}

// errTryAgain: the node changed hands while claiming it; create again.
var errTryAgain = errors.New("zkit: node changed while claiming it")

// claim adopts the node after a create that succeeded, failed with
// NodeExists or lost its reply: it is this process's only if sess owns it.
func (k *Kept) claim(ctx context.Context, sess *client.Session) (*Presence, <-chan client.WatchEvent, error) {
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	data, st, w, err := k.c.GetW(ctx, k.path)
	switch {
	case errors.Is(err, client.ErrNoNode):
		return nil, nil, errTryAgain
	case err != nil:
		return nil, nil, err
	}
	k.mu.Lock()
	want, before, last := k.data, k.owned[st.EphemeralOwner], k.cur
	k.mu.Unlock()
	switch {
	case st.EphemeralOwner == sess.ID():
	case before:
		// Left by a session of ours that the server has not expired yet:
		// wait until it is gone.
		return nil, nil, k.waitGone(ctx, sess)
	default:
		return nil, nil, &ConflictError{Path: k.path, Owner: st.EphemeralOwner, Reason: "owned by another session"}
	}
	p := newPresence(k.c, k.path, sess, st)
	if !k.opts.Shared && !bytes.Equal(data, want) {
		if st.Version != 0 && !wrote(last, data, st) && !wrote(k.claimed, data, st) {
			// Written by someone else since this process created it or
			// last wrote it (while it was suspended, say): a conflict, as
			// such a write is while the node is present.
			return nil, nil, &ConflictError{Path: k.path, Owner: st.EphemeralOwner, Reason: "written by another process"}
		}
		// Adopted after an Update made while the node was not present.
		p.pending = unsettled(want)
		nst, err := k.c.Set(ctx, k.path, want, st.Version)
		switch {
		case errors.Is(err, client.ErrBadVersion):
			// Written since it was read: by another process (the next
			// claim's read says so, a conflict), or by a write of ours
			// that lost its reply and landed late (the next claim
			// adopts it).
			return nil, nil, errTryAgain
		case err != nil:
			k.claimed = p // the next claim may find its write applied
			return nil, nil, err
		}
		p.version, p.pending = nst.Version, nil
	}
	k.claimed = nil
	// Current before writeMu is released: an Update from now on writes to
	// this presence, not to the last one, which would only keep its data
	// for a creation that has already happened.
	k.mu.Lock()
	k.cur = p
	k.mu.Unlock()
	return p, w, nil
}

// wrote reports whether data, what the node of st holds, is what
// presence p last wrote to its node, or the write it had pending when its
// reply was lost. A node that was never written (version 0) holds what its
// create wrote. Called with writeMu held.
func wrote(p *Presence, data []byte, st *client.Stat) bool {
	return p != nil && st.Czxid == p.token && (st.Version == p.version || p.pendingApplied(data, st))
}

// waitGone waits until the node is deleted, or sess is lost, or ctx ends.
func (k *Kept) waitGone(ctx context.Context, sess *client.Session) error {
	ok, _, w, err := k.c.ExistsW(ctx, k.path)
	if err != nil || !ok {
		return errTryAgain
	}
	select {
	case <-w:
		return errTryAgain
	case <-sess.Done():
		return errTryAgain
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backOff waits before trying again: for the backoff delay, or less when
// the connection state changes meanwhile. Unlike Pause it outlives a lost
// session: a Kept node is kept under the client's next one.
func (k *Kept) backOff(ctx context.Context, b *client.Backoff) error {
	changed := k.c.Changed()
	t := time.NewTimer(b.Next())
	defer t.Stop()
	select {
	case <-t.C:
	case <-changed:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// removeNode deletes the node if sess owns it: now while ctx allows, then
// in the background (see Remove).
func (k *Kept) removeNode(ctx context.Context, sess *client.Session) error {
	return Remove(ctx, k.c, sess, k.path, Removal{IfOwned: true, Logger: k.log})
}
