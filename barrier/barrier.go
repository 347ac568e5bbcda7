package barrier

import (
	"context"
	"errors"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
)

// Barrier is a simple barrier, in the layout of Curator's
// DistributedBarrier: the node at its path is the barrier. While it exists,
// Wait blocks; once it is removed, Wait returns. A coordinator Sets it
// before the workers look and Removes it to let them all go.
type Barrier struct {
	c    *client.Client
	path string
	cfg  config
}

// New returns the simple barrier at path. It does no I/O.
func New(c *client.Client, path string, opts ...Option) *Barrier {
	return &Barrier{c: c, path: path, cfg: newConfig(opts)}
}

// Path is the barrier's node.
func (b *Barrier) Path() string { return b.path }

// Set raises the barrier: it creates the node (persistent, with any
// missing ancestors, all with the barrier's ACL, as a double barrier's
// parents get theirs). Setting a barrier that is already set does nothing.
// Lost connections and replies are ridden out: creating the node twice
// only answers "node exists".
//
// A barrier's node is persistent and has no children. A node at the path
// that is ephemeral or has children is another recipe's (a rendezvous's
// zr, a lock's directory): Set, Wait and Remove refuse it with an error
// matching recipes.ErrOtherRecipe, and Remove does not delete it. A lock's
// (or another recipe's) directory that its recipe has already left empty
// is not told apart (ZooKeeper shows a container's Stat as a persistent
// node's): Set finds the barrier set, and the server's next check of its
// containers (a minute by default) lowers it.
func (b *Barrier) Set(ctx context.Context) error {
	if err := b.validate("barrier set"); err != nil {
		return err
	}
	err := b.c.CreateDir(ctx, b.path, client.Persistent, b.cfg.CreateOptions()...)
	if errors.Is(err, client.ErrNoNode) {
		parent, _ := client.SplitPath(b.path)
		if err = b.c.EnsurePath(ctx, parent, b.cfg.CreateOptions()...); err == nil {
			err = b.c.CreateDir(ctx, b.path, client.Persistent, b.cfg.CreateOptions()...)
		}
	}
	if err == nil {
		// The node may have been there already: make sure it is a
		// barrier's.
		err = b.c.Retry(ctx, func(ctx context.Context) error {
			_, err := b.stat(ctx)
			return err
		})
	}
	return b.wrap(err)
}

// stat returns the Stat of the barrier's node (nil when it does not
// exist), or an error matching ErrOtherRecipe when it is another
// recipe's.
func (b *Barrier) stat(ctx context.Context) (*client.Stat, error) {
	ok, st, err := b.c.Exists(ctx, b.path)
	if err != nil || !ok {
		return nil, err
	}
	return st, b.check(st)
}

// check refuses a node at the barrier's path that is another recipe's: an
// ephemeral node, or one with children (layout.Barrier).
func (b *Barrier) check(st *client.Stat) error {
	return layout.Barrier.Check(layout.Sighting{Path: b.path, Stat: st})
}

// Remove lowers the barrier: it deletes the node, and every Wait returns.
// Removing a barrier that is not set does nothing.
func (b *Barrier) Remove(ctx context.Context) error {
	if err := b.validate("barrier remove"); err != nil {
		return err
	}
	var pause client.Backoff
	for {
		st, err := b.stat(ctx)
		if err == nil && st != nil {
			err = b.c.Delete(ctx, b.path, st.Version)
		}
		switch {
		case err == nil, errors.Is(err, client.ErrNoNode):
			return nil
		case errors.Is(err, client.ErrBadVersion):
			// Written since the look: look again.
		case client.IsRetryable(err), client.IsOutcomeUnknown(err) && ctx.Err() == nil:
		default:
			return b.wrap(err)
		}
		if err := pause.Wait(ctx); err != nil {
			return b.wrap(err)
		}
	}
}

// Wait returns once the barrier is not set: at once if its node does not
// exist, otherwise when the node is deleted. A deletion it was told of
// counts even if the barrier is set again before Wait looks. Wait rides
// out lost connections and sessions (the barrier belongs to no session),
// and returns ctx's error when ctx ends first, or one matching
// recipes.ErrOtherRecipe when the node at the path is another recipe's
// (see Set) instead of waiting for it to go.
func (b *Barrier) Wait(ctx context.Context) error {
	if err := b.validate("barrier wait"); err != nil {
		return err
	}
	var pause client.Backoff
	for {
		set, st, w, err := b.c.ExistsW(ctx, b.path)
		if err == nil && set {
			err = b.check(st)
		}
		switch {
		case err == nil && !set:
			return nil
		case err == nil:
			pause.Reset()
			select {
			case ev := <-w:
				if ev.Type == client.EventNodeDeleted {
					return nil
				}
				continue // changed, or the watch was dropped: look again
			case <-ctx.Done():
				return b.wrap(ctx.Err())
			}
		case client.IsRetryable(err), client.IsSessionLost(err) && !errors.Is(err, client.ErrClosed):
		default:
			return b.wrap(err)
		}
		if err := pause.Wait(ctx); err != nil {
			return b.wrap(err)
		}
	}
}

func (b *Barrier) validate(op string) error {
	if err := client.CheckPath(op, b.path); err != nil {
		return err
	}
	if b.path == "/" {
		return &client.InputError{Op: op, Path: b.path, Reason: "a barrier needs a node of its own, not the root"}
	}
	return nil
}

func (b *Barrier) wrap(err error) error { return recipes.Wrap("barrier", b.path, err) }
