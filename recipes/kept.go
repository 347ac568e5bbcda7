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
	"github.com/zkit-dev/zkit/internal/recipekit"
)

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
	// ParentContainer creates the node's parent, whenever it is missing,
	// as a container with ACL (CreateDir), its own missing parents as
	// persistent nodes: a directory the server deletes once it is empty
	// (a discovery service's node), which may be gone when the node is
	// created again. Otherwise missing parents are persistent nodes with
	// the client's default ACL.
	ParentContainer bool
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

	writeMu sync.Mutex // serializes writes to the node and checks of its version
	claimed *Presence  // a claim whose write lost its reply, or nil; guarded by writeMu

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
// Missing parents are created as persistent nodes (the parent a
// container with ParentContainer).
func Keep(ctx context.Context, c *client.Client, path string, data []byte, o KeepOptions) (*Kept, error) {
	if err := client.CheckPath("keep", path); err != nil {
		return nil, err
	}
	if path == "/" {
		return nil, &client.InputError{Op: "keep", Path: path, Reason: "the root cannot be an ephemeral node"}
	}
	if err := CheckData(c, "keep", path, data); err != nil {
		return nil, err
	}
	if c.Context().Err() != nil {
		// Its Kepts may not have forgotten their nodes yet.
		return nil, LostSession(c, nil)
	}
	k := &Kept{c: c, path: path, opts: o, log: recipekit.Logger(o.Logger),
		data: bytes.Clone(data), changed: make(chan struct{}), owned: map[int64]bool{}, loopDone: make(chan struct{})}
	if _, dup := c.Local().LoadOrStore(keptKey(path), k); dup {
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
	stopOnClose := context.AfterFunc(c.Context(), func() { k.stop(LostSession(c, nil)) })
	go func() {
		defer stopOnClose()
		k.run(p, watch)
	}()
	return k, nil
}

// keptKey is the client.Local key of every Kept that has not ended, by
// path: a second Keep of the same node on the same client is a conflict.
type keptKey string

// forget frees the node's name for another Keep on the same client.
func (k *Kept) forget() { k.c.Local().CompareAndDelete(keptKey(k.path), k) }

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
	if ended := k.endedLocked(); ended != nil {
		return ended
	}
	return k.cur.Err()
}

// Present waits until the node is known to be present and returns that
// presence. It returns the reason when keeping has ended for good, and
// ctx's error when ctx ends first.
func (k *Kept) Present(ctx context.Context) (*Presence, error) {
	for {
		k.mu.Lock()
		p, ended, changed := k.cur, k.endedLocked(), k.changed
		k.mu.Unlock()
		if ended != nil {
			return nil, Wrap("present", k.path, ended)
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

// endedLocked is why keeping ended, nil while it goes on. A closed client
// ends it at once, even before the loop has noticed. Called with mu held.
func (k *Kept) endedLocked() error {
	if k.ended == nil && k.c.Context().Err() != nil {
		return LostSession(k.c, nil)
	}
	return k.ended
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
	ended := k.endedLocked()
	if k.ended == nil {
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
		return Wrap("remove", k.path, ended)
	}
	if err := k.removeNode(ctx, p.sess); err != nil {
		return Wrap("remove", k.path, err)
	}
	return nil
}

// run watches each presence until it ends, then makes the node present
// again, until keeping ends.
func (k *Kept) run(p *Presence, watch <-chan client.WatchEvent) {
	defer close(k.loopDone)
	for {
		cause := lossCause(k.c, k.watch(p, watch))
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
		k.removeNode(done, sess)
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
	t := &tolerance{c: k.c, limit: k.opts.SuspendTolerance}
	defer t.stop()
	var b client.Backoff
	for {
		changed, expired, over, resumed := t.check()
		switch {
		case over:
			return ErrSuspended
		case resumed:
			// Back within the tolerance: the watch was re-set, but events
			// from while disconnected may be lost with it; look again.
			watch = Fired()
		}
		select {
		case <-changed:
		case <-expired:
			return ErrSuspended
		case <-p.sess.Done():
			return LostSession(k.c, p.sess.Err())
		case <-k.stopCtx.Done():
			return context.Cause(k.stopCtx)
		case ev := <-watch:
			switch ev.Type {
			case client.EventNotWatching:
				return LostSession(k.c, ev.Err)
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
				watch = firedAfter(b.Next())
				continue
			}
			b.Reset()
			watch = next
		}
	}
}
