package recipes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/zkit-dev/zkit/client"
)

// Removal says how Remove deletes a node.
type Removal struct {
	// Signal deletes the node with the release signal (see the package
	// documentation): SetOp then DeleteOp in one Multi. Only a holder may
	// send it.
	Signal bool
	// IfOwned deletes the node only while the session passed to Remove
	// owns it: a node of the same name that another session created
	// meanwhile is left alone. Used for nodes with a fixed name (a group
	// member, a rendezvous node); sequence nodes are never created again.
	IfOwned bool
	// Logger receives a warning when a background delete gives up.
	Logger *slog.Logger
}

// Remove deletes the ephemeral node path owned by sess, on every exit path
// of a recipe. It tries now, retrying through lost connections and replies
// (deleting twice is harmless) while ctx allows; when ctx ends first it
// hands the delete over to the background, where it goes on for as long as
// the client and sess live, and returns ctx's error. A node already gone
// counts as deleted, and so does a lost sess: the server deletes the
// ephemeral nodes of a lost session itself. When the client gave sess up
// on its own clock, though, the server may still have it (see
// removeGivenUp): the node is then deleted in the background, under the
// client's next session. Pass a context that has ended to delete in the
// background only.
func Remove(ctx context.Context, c *client.Client, sess *client.Session, path string, o Removal) error {
	err := ctx.Err()
	if err == nil {
		if err = remove(ctx, c, sess, path, o); err == nil {
			return nil
		}
	}
	c.Go(func(life context.Context) {
		ctx, cancel := context.WithCancel(life)
		defer cancel()
		stop := context.AfterFunc(sess.Context(), cancel)
		defer stop()
		o.Signal = false // the release signal only ever goes with a holder's Unlock
		err := remove(ctx, c, sess, path, o)
		switch {
		case err == nil, life.Err() != nil:
		case !sess.Alive():
			removeGivenUp(c, sess, path, o.Logger)
		default:
			logger(o.Logger).Warn("zkit: could not delete node", "path", path, "err", err)
		}
	})
	return fmt.Errorf("zkit: delete %q: %w", path, err)
}

// removeGivenUp deletes, in the background for as long as the client
// lives, the node path of sess, a session the client gave up on its own
// clock (disconnected for longer than its timeout) rather than one the
// server reported expired or the client's Close ended: the server may
// still have it, and keep its nodes until it expires it in turn, for up to
// a whole session timeout when its timers were reset meanwhile (a server
// restart, a leader election). A lock node left so would keep every
// waiter, and this process's next attempt, waiting for nobody. It deletes
// the node under the client's next session, and only while sess owns it.
func removeGivenUp(c *client.Client, sess *client.Session, path string, log *slog.Logger) {
	whileGivenUp(c, sess, log, path, func(ctx context.Context) error {
		return removeOnce(ctx, c, sess, path, Removal{IfOwned: true})
	})
}

// whileGivenUp runs del, which deletes what, under the client's next
// sessions in the background for as long as the client lives, until it
// succeeds or fails for good, when sess is a session the client gave up
// (see removeGivenUp). It does nothing for a session the server expired or
// the client's Close ended: their nodes are gone.
func whileGivenUp(c *client.Client, sess *client.Session, log *slog.Logger, what string, del func(ctx context.Context) error) {
	if cause := sess.Err(); cause == nil || errors.Is(cause, client.ErrClosed) || errors.Is(cause, client.ErrSessionExpired) {
		return
	}
	c.Go(func(life context.Context) {
		var b client.Backoff
		for {
			if _, err := c.WaitConnected(life); err != nil {
				return
			}
			err := del(life)
			switch {
			case err == nil, errors.Is(err, client.ErrNoNode):
				return
			case errors.Is(err, client.ErrBadVersion), client.IsTransient(err), client.IsOutcomeUnknown(err):
			default:
				if life.Err() == nil {
					logger(log).Warn("zkit: could not delete node of a session given up", "path", what, "err", err)
				}
				return
			}
			if b.Wait(life) != nil {
				return
			}
		}
	})
}

// remove deletes path until it is gone, sess is lost, or ctx ends.
func remove(ctx context.Context, c *client.Client, sess *client.Session, path string, o Removal) error {
	var b client.Backoff
	for {
		if !sess.Alive() {
			removeGivenUp(c, sess, path, o.Logger)
			return nil
		}
		err := removeOnce(ctx, c, sess, path, o)
		switch {
		case err == nil, errors.Is(err, client.ErrNoNode):
			return nil
		case client.IsSessionLost(err) && !sess.Alive():
			removeGivenUp(c, sess, path, o.Logger)
			return nil
		case errors.Is(err, client.ErrBadVersion) && o.IfOwned:
			// Written meanwhile: look at the owner again.
		case client.IsRetryable(err), client.IsOutcomeUnknown(err):
		default:
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-sess.Done():
		default:
			if err := b.Wait(ctx); err != nil {
				return err
			}
		}
	}
}

// NewerOwner returns c's current session when it, and not sess, owns the
// node whose Stat is st (nil: not read): the node was created under the
// client's next session, sess having been lost between the recipe's check
// and its create. Such a node is the current session's to delete: deleting
// it under the lost sess would leave it for as long as the new session
// lives. It returns nil otherwise.
func NewerOwner(c *client.Client, sess *client.Session, st *client.Stat) *client.Session {
	if st == nil || st.EphemeralOwner == sess.ID() {
		return nil
	}
	if cur := c.Session(); cur != nil && cur.ID() == st.EphemeralOwner {
		return cur
	}
	return nil
}

func removeOnce(ctx context.Context, c *client.Client, sess *client.Session, path string, o Removal) error {
	switch {
	case o.Signal:
		_, err := c.Multi(ctx, client.SetOp(path, nil, -1), client.DeleteOp(path, -1))
		return err
	case o.IfOwned:
		ok, st, err := c.Exists(ctx, path)
		if err != nil || !ok || st.EphemeralOwner != sess.ID() {
			return err
		}
		return c.Delete(ctx, path, st.Version)
	}
	return c.Delete(ctx, path, -1)
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// done is a context that has ended: Remove(done, ...) deletes in the
// background only.
var done = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// RemoveProtected deletes, on every exit path of a recipe, the ephemeral
// nodes in dir that sess owns and whose protection ids (client.NewProtectedID)
// are among ids: the nodes of a Multi of protected creates whose reply was
// lost, which may or may not have been applied. It syncs, lists dir and
// deletes what it finds, now while ctx allows, otherwise in the background
// for as long as the client and sess live, as Remove does; and, as Remove
// does, under the client's next session when the client gave sess up
// while the server may still keep it.
func RemoveProtected(ctx context.Context, c *client.Client, sess *client.Session, dir string, ids []string, o Removal) error {
	err := ctx.Err()
	if err == nil {
		if err = removeProtected(ctx, c, sess, dir, ids, o); err == nil {
			return nil
		}
	}
	c.Go(func(life context.Context) {
		ctx, cancel := context.WithCancel(life)
		defer cancel()
		stop := context.AfterFunc(sess.Context(), cancel)
		defer stop()
		if err := removeProtected(ctx, c, sess, dir, ids, o); err != nil && life.Err() == nil && sess.Alive() {
			logger(o.Logger).Warn("zkit: could not delete nodes", "dir", dir, "err", err)
		}
	})
	return fmt.Errorf("zkit: delete protected nodes in %q: %w", dir, err)
}

// removeProtected finds and deletes the nodes of ids in dir until none is
// left, sess is lost, or ctx ends.
func removeProtected(ctx context.Context, c *client.Client, sess *client.Session, dir string, ids []string, o Removal) error {
	var b client.Backoff
	for {
		if !sess.Alive() {
			removeProtectedGivenUp(c, sess, dir, ids, o.Logger)
			return nil
		}
		names, err := findProtected(ctx, c, dir, ids)
		if err == nil {
			for _, name := range names {
				if err = remove(ctx, c, sess, client.JoinPath(dir, name), Removal{Logger: o.Logger}); err != nil {
					break
				}
			}
			if err == nil {
				return nil
			}
		}
		if !sess.Alive() {
			continue // lost meanwhile: see the top of the loop
		}
		if !client.IsRetryable(err) && !client.IsSessionLost(err) {
			return err
		}
		select {
		case <-sess.Done():
		default:
			if err := b.Wait(ctx); err != nil {
				return err
			}
		}
	}
}

// removeProtectedGivenUp deletes the nodes of RemoveProtected under the
// client's next session, those that sess, a session the client gave up,
// still owns (see removeGivenUp).
func removeProtectedGivenUp(c *client.Client, sess *client.Session, dir string, ids []string, log *slog.Logger) {
	whileGivenUp(c, sess, log, dir, func(ctx context.Context) error {
		names, err := findProtected(ctx, c, dir, ids)
		for _, name := range names {
			if err == nil || errors.Is(err, client.ErrNoNode) {
				err = removeOnce(ctx, c, sess, client.JoinPath(dir, name), Removal{IfOwned: true})
			}
		}
		return err
	})
}

// findProtected syncs dir and lists the children whose protection id is
// one of ids (none if dir is missing).
func findProtected(ctx context.Context, c *client.Client, dir string, ids []string) ([]string, error) {
	err := c.Sync(ctx, dir)
	if err == nil {
		var children []string
		children, _, err = c.Children(ctx, dir)
		var found []string
		for _, ch := range children {
			if id, _, ok := client.ParseProtected(ch); ok && slices.Contains(ids, id) {
				found = append(found, ch)
			}
		}
		if err == nil {
			return found, nil
		}
	}
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	return nil, err
}
