package recipes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/zkit-dev/zkit/client"
)

// RemoveNode deletes the ephemeral node path owned by sess, retrying with
// backoff while the connection is down, until ctx ends. A node that is
// already gone counts as deleted, and so does a lost sess: the server
// deletes its ephemeral nodes itself. An outcome-unknown delete is simply
// retried, since deleting twice is harmless.
//
// With signal set, the node is released with the release signal (see the
// package documentation): SetOp then DeleteOp in one Multi. Only a holder
// may send it.
func RemoveNode(ctx context.Context, c *client.Client, sess *client.Session, path string, signal bool) error {
	var b Backoff
	for {
		if !sess.Alive() {
			return nil
		}
		var err error
		if signal {
			_, err = c.Multi(ctx, client.SetOp(path, nil, -1), client.DeleteOp(path, -1))
		} else {
			err = c.Delete(ctx, path, -1)
		}
		switch {
		case err == nil, errors.Is(err, client.ErrNoNode):
			return nil
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

// DeleteInBackground deletes the ephemeral node path owned by sess without
// waiting: it keeps trying (c.Go) for as long as the client lives and sess
// is alive. Recipes call it on every exit path that leaves a node behind.
func DeleteInBackground(c *client.Client, sess *client.Session, path string, log *slog.Logger) {
	c.Go(func(life context.Context) {
		ctx, cancel := context.WithCancel(life)
		defer cancel()
		stop := context.AfterFunc(sess.Context(), cancel)
		defer stop()
		if err := RemoveNode(ctx, c, sess, path, false); err != nil && life.Err() == nil && sess.Alive() {
			logger(log).Warn("zkit: could not delete node", "path", path, "err", err)
		}
	})
}

// removeOrDefer deletes path now if ctx allows, and in the background
// otherwise.
func removeOrDefer(ctx context.Context, c *client.Client, sess *client.Session, path string, log *slog.Logger) {
	if ctx.Err() == nil && RemoveNode(ctx, c, sess, path, false) == nil {
		return
	}
	DeleteInBackground(c, sess, path, log)
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
