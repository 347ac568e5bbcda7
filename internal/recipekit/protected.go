package recipekit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/zkit-dev/zkit/client"
)

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
	inBackground(c, sess, func(ctx context.Context) error {
		return removeProtected(ctx, c, sess, dir, ids, o)
	}, func(life context.Context, err error) {
		if err != nil && life.Err() == nil && sess.Alive() {
			Logger(o.Logger).Warn("zkit: could not delete nodes", "dir", dir, "err", err)
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
