package recipekit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/zkit-dev/zkit/client"
)

// Removal says how Remove deletes a node (recipes.Removal documents each
// field).
type Removal struct {
	Signal  bool
	IfOwned bool
	Logger  *slog.Logger
}

// Remove does the work of recipes.Remove, whose documentation is the
// contract: it deletes the ephemeral node path owned by sess now while ctx
// allows, then in the background for as long as the client and sess live,
// and under the client's next session when the client gave sess up (see
// removeGivenUp).
func Remove(ctx context.Context, c *client.Client, sess *client.Session, path string, o Removal) error {
	err := ctx.Err()
	if err == nil {
		if err = remove(ctx, c, sess, path, o); err == nil {
			return nil
		}
	}
	o.Signal = false // the release signal only ever goes with a holder's Unlock
	inBackground(c, sess, func(ctx context.Context) error {
		return remove(ctx, c, sess, path, o)
	}, func(life context.Context, err error) {
		switch {
		case err == nil, life.Err() != nil:
		case !sess.Alive():
			removeGivenUp(c, sess, path, o.Logger)
		default:
			Logger(o.Logger).Warn("zkit: could not delete node", "path", path, "err", err)
		}
	})
	return fmt.Errorf("zkit: delete %q: %w", path, err)
}

// inBackground runs del in the background for as long as the client and
// sess live, then hands its error to after, with the client's life (ended
// once the client is closed).
func inBackground(c *client.Client, sess *client.Session, del func(ctx context.Context) error, after func(life context.Context, err error)) {
	c.Go(func(life context.Context) {
		ctx, cancel := context.WithCancel(life)
		defer cancel()
		stop := context.AfterFunc(sess.Context(), cancel)
		defer stop()
		after(life, del(ctx))
	})
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
					Logger(log).Warn("zkit: could not delete node of a session given up", "path", what, "err", err)
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

// Logger returns l, or a logger that discards everything when l is nil.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
