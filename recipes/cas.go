package recipes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// Update changes the data of the node at path with the paper's versioned
// compare-and-set loop: read the data and version, compute the new data
// with fn, write it if the version is unchanged, and start over (after a
// short jittered backoff) when another writer got in first. It returns the
// data written and the node's new Stat. fn may be called many times; an
// error from fn stops the loop and is returned as is.
//
// A write whose reply is lost is not retried blindly (it may have been
// applied): Update reads the node again, retries if its version has not
// moved, and otherwise returns an error matching client.ErrOutcomeUnknown.
//
// b paces the retries after a conflict; nil means a client.Backoff from 1ms to
// 50ms. Other errors (no such node, session lost, ...) are returned as is.
func Update(ctx context.Context, c *client.Client, path string, fn func(data []byte, st *client.Stat) ([]byte, error), b *client.Backoff) ([]byte, *client.Stat, error) {
	if b == nil {
		b = &client.Backoff{Min: time.Millisecond, Max: 50 * time.Millisecond}
	}
	var pause client.Backoff // for connection trouble
	for {
		data, st, err := c.Get(ctx, path)
		if client.IsRetryable(err) {
			if err := pause.Wait(ctx); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		next, err := fn(data, st)
		if err != nil {
			return nil, nil, err
		}
		nst, err := c.Set(ctx, path, next, st.Version)
		switch {
		case err == nil:
			return next, nst, nil
		case errors.Is(err, client.ErrBadVersion):
			if err := b.Wait(ctx); err != nil {
				return nil, nil, err
			}
			continue
		case client.IsRetryable(err):
			if err := pause.Wait(ctx); err != nil {
				return nil, nil, err
			}
			continue
		case !client.IsOutcomeUnknown(err) || ctx.Err() != nil:
			return nil, nil, err
		}
		// The write may have been applied: look again.
		moved, rerr := versionMoved(ctx, c, path, st.Version, &pause)
		if rerr != nil {
			return nil, nil, fmt.Errorf("%w (and re-reading failed: %v)", err, rerr)
		}
		if moved {
			return nil, nil, err
		}
	}
}

// versionMoved reports whether the node's version is no longer v.
func versionMoved(ctx context.Context, c *client.Client, path string, v int32, pause *client.Backoff) (bool, error) {
	for {
		if err := c.Sync(ctx, path); err == nil {
			ok, st, err := c.Exists(ctx, path)
			if err == nil {
				return !ok || st.Version != v, nil
			}
			if !client.IsRetryable(err) {
				return false, err
			}
		} else if !client.IsRetryable(err) {
			return false, err
		}
		if err := pause.Wait(ctx); err != nil {
			return false, err
		}
	}
}
