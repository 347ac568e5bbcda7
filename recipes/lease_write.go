package recipes

import (
	"bytes"
	"context"
	"errors"

	"github.com/zkit-dev/zkit/client"
)

// Update replaces the data of the lease's node, as its holder: a leader
// publishing a new value without giving up its place (see election's
// Term.Proclaim). It writes only while the lease is held, with a write
// conditional on the version the lease last wrote: ZooKeeper refuses it
// once the node is gone (deleted, or with its session) or written by
// someone else, so that it never lands on a node the lease does not hold.
// The lease takes its own writes for what they are; a write by anyone
// else ends it, as before (ErrNodeDeleted).
//
// A write to a node is the release signal to the waiters of a lock (see
// the package documentation), who would take their turn at once. Only
// the lease of a node whose waiters confirm their turn on the server
// (Kind.Confirmed: an election's) may be written: Update refuses any other
// with an *client.InputError, as it refuses data over the server's limit,
// before anything is sent. Each write still wakes the waiter right behind
// the node, which lists the queue once more and waits on.
//
// Update returns nil once the data is written. On a lease that has ended,
// or that the write finds gone or written by someone else (the lease then
// ends), it writes nothing and returns the lease's Err: an error matching
// ErrLost, or ErrReleased after Unlock. If the write's reply is lost, Update
// reads the node back to learn whether it was applied; when ctx ends first
// it returns an error matching client.ErrOutcomeUnknown (or ctx's error),
// and the next Update settles it before it writes. Such a write, applied
// or not, never ends the lease. Its errors do not name a call: the
// recipe's call that updates wraps them with its own name (Wrap).
func (l *Lease) Update(ctx context.Context, data []byte) error {
	if !l.writable {
		return &client.InputError{Op: "update", Path: l.path,
			Reason: "the node's waiters would take a write for its release: only a node of a Confirmed kind may be written"}
	}
	if err := CheckData(l.c, "update", l.path, data); err != nil {
		return err
	}
	data = unsettled(bytes.Clone(data))
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	var b client.Backoff
	for {
		switch {
		case l.ctx.Err() != nil:
			return context.Cause(l.ctx)
		case !l.sess.Alive():
			// The client's next session would write a node it does not own.
			l.lose(LostSession(l.c, l.sess.Err()), true)
			continue
		case l.inDoubt():
			applied, err := l.settle(ctx)
			switch {
			case err != nil:
				return err
			case applied != nil && bytes.Equal(applied, data):
				return nil // this very write
			}
			continue
		}
		l.mu.Lock()
		version := l.version
		l.pending = data
		l.mu.Unlock()
		st, err := l.c.Set(ctx, l.path, data, version)
		switch {
		case err == nil:
			l.mu.Lock()
			l.version, l.pending = st.Version, nil
			l.mu.Unlock()
			return nil
		case client.IsOutcomeUnknown(err):
			if ctx.Err() != nil {
				return err // settled by the next Update
			}
			continue // settled at once
		}
		l.mu.Lock()
		l.pending = nil // not applied
		l.mu.Unlock()
		switch {
		case errors.Is(err, client.ErrBadVersion), errors.Is(err, client.ErrNoNode):
			l.lose(l.goneCause(), true)
		case client.IsSessionLost(err):
			l.lose(LostSession(l.c, err), true)
		case !client.IsRetryable(err):
			return err
		default:
			if err := b.Wait(ctx); err != nil {
				return err
			}
		}
	}
}

// inDoubt reports whether a write of the lease's is of unknown outcome.
func (l *Lease) inDoubt() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pending != nil
}

// settle reads the node back after a write whose outcome is unknown, and
// records whether it was applied: it returns the write's data if so, nil
// if not. It ends the lease when the node is gone, or was written by
// someone else; it returns ctx's error, or the client's, when it cannot
// read the node. Called with writeMu held.
func (l *Lease) settle(ctx context.Context) (applied []byte, err error) {
	var b client.Backoff
	for l.ctx.Err() == nil {
		// The server answering may be behind the write: sync it first.
		err = l.c.Sync(ctx, l.path)
		var (
			data []byte
			st   *client.Stat
		)
		if err == nil {
			data, st, err = l.c.Get(ctx, l.path)
		}
		switch {
		case errors.Is(err, client.ErrNoNode):
			l.lose(l.goneCause(), false)
		case err == nil && (st.EphemeralOwner != l.sess.ID() || !l.wrote(data, st)):
			l.lose(ErrNodeDeleted, true) // written by someone else
		case err == nil:
			l.mu.Lock()
			if st.Version != l.version {
				applied = l.pending
			}
			l.version, l.pending = st.Version, nil
			l.mu.Unlock()
			return applied, nil
		case client.IsSessionLost(err):
			l.lose(LostSession(l.c, err), true)
		case !client.IsRetryable(err):
			return nil, err
		default:
			if err := b.Wait(ctx); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil // Update returns the lease's end
}

// wrote reports whether the node's data and Stat are the lease's own:
// the version it last wrote, or the next one with the data of its write
// in flight or of unknown outcome.
func (l *Lease) wrote(data []byte, st *client.Stat) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return st.Version == l.version ||
		(l.pending != nil && st.Version == l.version+1 && bytes.Equal(data, l.pending))
}

// goneCause is why the lease ended when its node is found gone, or
// written by someone else: its session's loss when that is what it was.
func (l *Lease) goneCause() error {
	if !l.sess.Alive() {
		return LostSession(l.c, l.sess.Err())
	}
	return ErrNodeDeleted
}
