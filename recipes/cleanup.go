package recipes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
// ephemeral nodes of a lost session itself. Pass a context that has ended
// to delete in the background only.
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
		if err := remove(ctx, c, sess, path, o); err != nil && life.Err() == nil && sess.Alive() {
			logger(o.Logger).Warn("zkit: could not delete node", "path", path, "err", err)
		}
	})
	return fmt.Errorf("zkit: delete %q: %w", path, err)
}

// remove deletes path until it is gone, sess is lost, or ctx ends.
func remove(ctx context.Context, c *client.Client, sess *client.Session, path string, o Removal) error {
	var b client.Backoff
	for {
		if !sess.Alive() {
			return nil
		}
		err := removeOnce(ctx, c, sess, path, o)
		switch {
		case err == nil, errors.Is(err, client.ErrNoNode):
			return nil
		case client.IsSessionLost(err) && !sess.Alive():
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
