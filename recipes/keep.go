package recipes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// ErrConflict is matched (errors.Is) by every *ConflictError: the node is
// claimed by another process.
var ErrConflict = errors.New("zkit: node claimed by another process")

// ConflictError reports a node that another process claims: it exists and
// is owned by a session that is not this process's, or another process
// wrote to it while this process kept it. zkit neither overwrites nor
// deletes such a node.
type ConflictError struct {
	Path string
	// Owner is the ephemeralOwner of the node found (0 for a persistent
	// node), or this process's own session when the conflict is a write
	// by someone else.
	Owner  int64
	Reason string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("zkit: %s: %s (owner session 0x%x)", e.Path, e.Reason, e.Owner)
}

// Is makes errors.Is(err, ErrConflict) and errors.Is(err, ErrLost) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict || target == ErrLost }

// KeepOptions configures Keep.
type KeepOptions struct {
	// ACL is the node's ACL; empty means the client's default ACL.
	ACL []client.ACL
	// SuspendTolerance is how long the connection may stay suspended
	// before the current Presence ends (default 0: at once). The node is
	// adopted again, as a new Presence, once the connection is back.
	SuspendTolerance time.Duration
	Logger           *slog.Logger
	// Once stops keeping when the first Presence ends: the node is not
	// created again (a rendezvous node whose loss must be seen by all).
	Once bool
	// Shared lets other processes write the node's data (a rendezvous
	// node filled by its master). Otherwise such a write is a conflict:
	// another process claims the node.
	Shared bool
}

// Kept is an ephemeral node that this process keeps present across
// sessions (Curator's PersistentNode in EPHEMERAL mode): group members and
// self-published rendezvous nodes.
//
// Keep creates the node under the current session. From then on Kept
// watches it and creates it again under each new session, after someone
// deleted it, and adopts it again after a reconnect; each stretch during
// which the node is known to be present is one [Presence]. Between two
// presences the node may be absent, or present but not provably so: Done
// (the current presence's) is closed then, and Present waits for the next.
//
// A node found already there is adopted only if the current session owns it
// (a create whose reply was lost). A node owned by another session is a
// *ConflictError: it is never overwritten nor deleted. A node that only a
// previous session of this Kept owned (not yet expired on the server) is
// waited out. Unless Shared, a write by another process to the kept node
// is a conflict too; keeping then ends and zkit deletes its own node,
// leaving the name to the other claimant.
type Kept struct {
	c    *client.Client
	path string
	opts KeepOptions
	log  *slog.Logger
	conn *connWatch

	writeMu sync.Mutex // serializes writes to the node and checks of its version

	mu      sync.Mutex
	data    []byte         // the data the node should have
	cur     *Presence      // the current (or last) presence
	changed chan struct{}  // closed and replaced when cur changes or keeping ends
	ended   error          // why keeping ended; nil while it goes on
	owned   map[int64]bool // sessions under which this Kept had the node

	stopCtx  context.Context
	stop     context.CancelCauseFunc
	loopDone chan struct{}

	removeOnce sync.Once
	removed    error
}

// Keep creates the ephemeral node path with data and keeps it present until
// Remove is called, keeping ends with a conflict or an error that retrying
// cannot cure, or the client is closed. It returns once the node is present
// (its first Presence), or with an error: an *client.InputError for an
// invalid path or data (nothing is sent), a *ConflictError when another
// session owns the node, ctx's error.
//
// Missing parents are created as persistent nodes.
func Keep(ctx context.Context, c *client.Client, path string, data []byte, o KeepOptions) (*Kept, error) {
	if reason := client.ValidatePath(path, false); reason != "" {
		return nil, &client.InputError{Op: "keep", Path: path, Reason: reason}
	}
	if path == "/" {
		return nil, &client.InputError{Op: "keep", Path: path, Reason: "the root cannot be an ephemeral node"}
	}
	if err := checkData("keep", path, data); err != nil {
		return nil, err
	}
	k := &Kept{c: c, path: path, opts: o, log: logger(o.Logger), conn: watchConn(c),
		data: bytes.Clone(data), changed: make(chan struct{}), owned: map[int64]bool{}, loopDone: make(chan struct{})}
	if _, dup := keptNodes.LoadOrStore(keptKey{c, path}, k); dup {
		// The server cannot tell two claims of one session apart.
		return nil, &ConflictError{Path: path, Owner: c.Session().ID(), Reason: "already kept by this process on this client"}
	}
	k.stopCtx, k.stop = context.WithCancelCause(context.Background())
	p, watch, err := k.establish(ctx)
	if err != nil {
		k.stop(err)
		k.forget()
		return nil, err
	}
	k.cur = p
	stopOnClose := context.AfterFunc(c.Context(), func() { k.stop(lostSession(client.ErrClosed)) })
	go func() {
		defer stopOnClose()
		k.run(p, watch)
	}()
	return k, nil
}

// keptNodes holds every Kept that has not ended, by client and path: a
// second Keep of the same node on the same client is a conflict.
var keptNodes sync.Map // keptKey -> *Kept

type keptKey struct {
	c    *client.Client
	path string
}

// forget frees the node's name for another Keep on the same client.
func (k *Kept) forget() { keptNodes.CompareAndDelete(keptKey{k.c, k.path}, k) }

func checkData(op, path string, data []byte) error {
	if max := client.MaxData(path); len(data) > max {
		return &client.InputError{Op: op, Path: path, Reason: fmt.Sprintf("data of %d bytes is over the %d-byte limit", len(data), max)}
	}
	return nil
}

// Node is the kept node's full path.
func (k *Kept) Node() string { return k.path }

// Presence returns the current presence, or the last one when the node is
// not known to be present right now (its Done is closed then).
func (k *Kept) Presence() *Presence {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cur
}

// Done is the current presence's Done: it is closed when the node may no
// longer be present. The channel belongs to the presence current at the
// call; once the node is present again, Done returns the new presence's.
func (k *Kept) Done() <-chan struct{} { return k.Presence().Done() }

// Context is the current presence's Context.
func (k *Kept) Context() context.Context { return k.Presence().Context() }

// Err is nil while the node is known to be present. Otherwise it is why
// keeping ended for good (ErrReleased after Remove, a *ConflictError, ...),
// or, while zkit is making the node present again, why the last presence
// ended.
func (k *Kept) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ended != nil {
		return k.ended
	}
	return k.cur.Err()
}

// Present waits until the node is known to be present and returns that
// presence. It returns the reason when keeping has ended for good, and
// ctx's error when ctx ends first.
func (k *Kept) Present(ctx context.Context) (*Presence, error) {
	for {
		k.mu.Lock()
		p, ended, changed := k.cur, k.ended, k.changed
		k.mu.Unlock()
		if ended != nil {
			return nil, ended
		}
		if p.Err() == nil {
			return p, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Update replaces the node's data. While the node is present it writes it
// at once, conditionally on the version this process last wrote: a
// *ConflictError means someone else wrote in between. While it is not, the
// data is kept for the next creation and Update returns nil. A write whose
// reply is lost is resolved by reading the node back; if ctx ends first,
// Update returns an error matching client.ErrOutcomeUnknown and the next
// check settles it.
func (k *Kept) Update(ctx context.Context, data []byte) error {
	if err := checkData("update", k.path, data); err != nil {
		return err
	}
	data = bytes.Clone(data)
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	k.mu.Lock()
	ended, p := k.ended, k.cur
	if ended == nil {
		k.data = data
	}
	k.mu.Unlock()
	if ended != nil {
		return fmt.Errorf("zkit: update %s: %w", k.path, ended)
	}
	var b Backoff
	for p.Err() == nil {
		st, err := k.c.Set(ctx, k.path, data, p.version)
		switch {
		case err == nil:
			p.version, p.pending = st.Version, nil
			return nil
		case errors.Is(err, client.ErrBadVersion):
			return &ConflictError{Path: k.path, Owner: p.sess.ID(), Reason: "written by another process"}
		case errors.Is(err, client.ErrNoNode), client.IsSessionLost(err):
			return nil // written when the node is created again
		case client.IsOutcomeUnknown(err):
			p.pending = data
			if ctx.Err() != nil {
				return err
			}
			applied, rerr := k.settle(ctx, p)
			if rerr != nil || applied {
				return rerr
			}
			continue
		case !client.IsRetryable(err):
			return err
		}
		if err := b.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// settle reads the node back after a write whose outcome is unknown, and
// reports whether it was applied. Called with writeMu held.
func (k *Kept) settle(ctx context.Context, p *Presence) (bool, error) {
	var b Backoff
	for {
		if err := k.c.Sync(ctx, k.path); err == nil {
			data, st, err := k.c.Get(ctx, k.path)
			switch {
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
	case p.pending != nil && st.Version == p.version+1 && bytes.Equal(data, p.pending):
		p.version, p.pending = st.Version, nil
		return true, nil
	}
	return false, &ConflictError{Path: k.path, Owner: p.sess.ID(), Reason: "written by another process"}
}

// Remove stops keeping the node and deletes it: the current presence ends
// with ErrReleased. It waits for the delete while ctx allows; if ctx ends
// first, the delete goes on in the background for as long as the client and
// the session live, and Remove returns ctx's error. If keeping had already
// ended (a conflict, a lost client), Remove returns that reason. Calling it
// again returns the same.
func (k *Kept) Remove(ctx context.Context) error {
	k.removeOnce.Do(func() { k.removed = k.remove(ctx) })
	return k.removed
}

func (k *Kept) remove(ctx context.Context) error {
	k.mu.Lock()
	ended := k.ended
	if ended == nil {
		k.ended = ErrReleased
		k.notifyLocked()
	}
	k.mu.Unlock()
	k.stop(ErrReleased)
	<-k.loopDone
	k.forget()
	p := k.Presence()
	p.end(ErrReleased)
	if ended != nil {
		return fmt.Errorf("zkit: remove %s: %w", k.path, ended)
	}
	if err := removeOwned(ctx, k.c, p.sess, k.path); err != nil {
		k.removeInBackground(p.sess)
		return fmt.Errorf("zkit: remove %s: %w", k.path, err)
	}
	return nil
}

// run watches each presence until it ends, then makes the node present
// again, until keeping ends.
func (k *Kept) run(p *Presence, watch <-chan client.WatchEvent) {
	defer close(k.loopDone)
	for {
		cause := k.watch(p, watch)
		p.end(cause)
		if k.stopCtx.Err() != nil {
			k.stopped()
			return
		}
		k.log.Info("zkit: node no longer known to be present", "node", k.path, "cause", cause)
		if k.opts.Once || errors.Is(cause, ErrConflict) {
			k.finish(cause, p.sess)
			return
		}
		var err error
		p, watch, err = k.establish(k.stopCtx)
		if err != nil {
			if k.stopCtx.Err() != nil {
				k.stopped()
			} else {
				k.finish(err, nil)
			}
			return
		}
		k.mu.Lock()
		k.cur = p
		k.notifyLocked()
		k.mu.Unlock()
		k.log.Info("zkit: node present again", "node", k.path, "session", fmt.Sprintf("0x%x", p.sess.ID()))
	}
}

// stopped records why keeping was stopped from outside: Remove (which has
// recorded it already) or the client closing.
func (k *Kept) stopped() {
	if cause := context.Cause(k.stopCtx); !errors.Is(cause, ErrReleased) {
		k.finish(cause, nil)
	}
}

// finish ends keeping for good with cause, deleting the node that sess
// (when not nil) may still own.
func (k *Kept) finish(cause error, sess *client.Session) {
	k.mu.Lock()
	if k.ended == nil {
		k.ended = cause
		k.notifyLocked()
	}
	k.mu.Unlock()
	k.forget()
	k.log.Warn("zkit: stopped keeping node", "node", k.path, "cause", cause)
	if sess != nil {
		k.removeInBackground(sess)
	}
}

func (k *Kept) notifyLocked() {
	close(k.changed)
	k.changed = make(chan struct{})
}

// watch waits until presence p ends and returns why: the session is lost,
// the connection stays suspended beyond the tolerance, the node is deleted
// or claimed by another process, or keeping stops.
func (k *Kept) watch(p *Presence, watch <-chan client.WatchEvent) error {
	var timer *time.Timer
	var expired <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	var b Backoff
	for {
		suspended, since, changed := k.conn.state()
		switch {
		case suspended && timer == nil:
			left := k.opts.SuspendTolerance - time.Since(since)
			if left <= 0 {
				return ErrSuspended
			}
			timer = time.NewTimer(left)
			expired = timer.C
		case !suspended && timer != nil:
			timer.Stop()
			timer, expired = nil, nil
			// Back within the tolerance: the watch was re-set, but events
			// from while disconnected may be lost with it; look again.
			watch = retryEvent(k.stopCtx, &Backoff{Min: time.Nanosecond, Max: time.Nanosecond})
		}
		select {
		case <-changed:
		case <-expired:
			return ErrSuspended
		case <-p.sess.Done():
			return lostSession(p.sess.Err())
		case <-k.stopCtx.Done():
			return context.Cause(k.stopCtx)
		case ev := <-watch:
			switch ev.Type {
			case client.EventNotWatching:
				return lostSession(ev.Err)
			case client.EventNodeDeleted:
				return ErrNodeDeleted
			}
			next, err := k.recheck(p)
			switch {
			case errors.Is(err, client.ErrNoNode):
				return ErrNodeDeleted
			case errors.Is(err, ErrConflict):
				return err
			case err != nil:
				// Not decided (connection trouble): look again shortly.
				k.log.Debug("zkit: recheck of kept node will retry", "node", k.path, "err", err)
				watch = retryEvent(k.stopCtx, &b)
				continue
			}
			b.Reset()
			watch = next
		}
	}
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

// retryEvent returns a channel that delivers a NodeDataChanged event after
// b's next delay: the way watch asks for another recheck.
func retryEvent(ctx context.Context, b *Backoff) <-chan client.WatchEvent {
	ch := make(chan client.WatchEvent, 1)
	go func() {
		if b.Wait(ctx) == nil {
			ch <- client.WatchEvent{Type: client.EventNodeDataChanged}
		}
	}()
	return ch
}

// establish makes the node present under the current session: it creates
// it, or adopts it when the current session already owns it, and sets a
// watch on it. It retries while the connection or the session is being
// replaced, until ctx ends.
func (k *Kept) establish(ctx context.Context) (*Presence, <-chan client.WatchEvent, error) {
	var opts []client.CreateOption
	if len(k.opts.ACL) > 0 {
		opts = append(opts, client.WithACL(k.opts.ACL...))
	}
	var b Backoff
	for {
		if err := k.c.Context().Err(); err != nil {
			return nil, nil, lostSession(client.ErrClosed)
		}
		sess := k.c.Session()
		if sess == nil || !sess.Alive() {
			if err := k.pause(ctx, &b); err != nil {
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
		switch {
		case err == nil, errors.Is(err, client.ErrNodeExists), client.IsOutcomeUnknown(err) && ctx.Err() == nil:
			p, w, err := k.claim(ctx, sess)
			switch {
			case err == nil:
				return p, w, nil
			case errors.Is(err, errTryAgain), client.IsRetryable(err), client.IsSessionLost(err) && !errors.Is(err, client.ErrClosed):
			default:
				if ctx.Err() != nil {
					k.removeInBackground(sess)
				}
				return nil, nil, err
			}
		case client.IsOutcomeUnknown(err):
			k.removeInBackground(sess) // the create may have been applied
			return nil, nil, ctx.Err()
		case errors.Is(err, client.ErrNoNode):
			parent, _ := client.SplitPath(k.path)
			if err := k.c.EnsurePath(ctx, parent); err != nil && !client.IsRetryable(err) {
				return nil, nil, err
			}
			continue
		case client.IsRetryable(err), client.IsSessionLost(err) && !errors.Is(err, client.ErrClosed):
		default:
			return nil, nil, err
		}
		if err := k.pause(ctx, &b); err != nil {
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
	want, before := k.data, k.owned[st.EphemeralOwner]
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
	p := newPresence(k.path, sess, st)
	if !k.opts.Shared && !bytes.Equal(data, want) {
		// Adopted after an Update made while the node was not present.
		nst, err := k.c.Set(ctx, k.path, want, st.Version)
		if err != nil {
			return nil, nil, err
		}
		p.version = nst.Version
	}
	return p, w, nil
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

// pause waits before trying again: for the backoff delay, or less when the
// connection state changes meanwhile.
func (k *Kept) pause(ctx context.Context, b *Backoff) error {
	_, _, changed := k.conn.state()
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

// removeInBackground deletes the node if sess owns it, for as long as the
// client and sess live.
func (k *Kept) removeInBackground(sess *client.Session) {
	k.c.Go(func(life context.Context) {
		ctx, cancel := context.WithCancel(life)
		defer cancel()
		stop := context.AfterFunc(sess.Context(), cancel)
		defer stop()
		if err := removeOwned(ctx, k.c, sess, k.path); err != nil && life.Err() == nil && sess.Alive() {
			k.log.Warn("zkit: could not delete node", "path", k.path, "err", err)
		}
	})
}

// removeOwned deletes the ephemeral node path if sess owns it, retrying
// while the connection is down, until ctx ends. A node owned by another
// session is left alone; a lost sess means the server deletes the node.
func removeOwned(ctx context.Context, c *client.Client, sess *client.Session, path string) error {
	var b Backoff
	for {
		if !sess.Alive() {
			return nil
		}
		ok, st, err := c.Exists(ctx, path)
		if err == nil {
			if !ok || st.EphemeralOwner != sess.ID() {
				return nil
			}
			err = c.Delete(ctx, path, st.Version)
		}
		switch {
		case err == nil, errors.Is(err, client.ErrNoNode):
			return nil
		case errors.Is(err, client.ErrBadVersion):
			// Written meanwhile: look at the owner again.
		case client.IsSessionLost(err) && !sess.Alive():
			return nil
		case client.IsRetryable(err), client.IsOutcomeUnknown(err):
		default:
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("zkit: delete %q: %w", path, ctx.Err())
		}
		select {
		case <-sess.Done():
		default:
			if b.Wait(ctx) != nil {
				return fmt.Errorf("zkit: delete %q: %w", path, ctx.Err())
			}
		}
	}
}
