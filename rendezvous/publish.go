package rendezvous

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Publish fills zr with data, for the master. zr must exist: otherwise
// Publish returns an error matching ErrGone. Empty data (which reads as
// "not filled") and invalid paths are *client.InputError, before anything
// is sent. A write whose reply is lost (the connection or the session
// lost under it) is resolved by reading zr back, and made again when zr
// does not hold the data; if reading back is not possible, the error
// matches client.ErrOutcomeUnknown.
func (r *Rendezvous) Publish(ctx context.Context, data []byte) error {
	return recipes.Wrap("publish", r.path, publish(ctx, r.c, r.path, data))
}

func publish(ctx context.Context, c *client.Client, path string, data []byte) error {
	if err := checkPublish(c, "publish", path, data); err != nil {
		return err
	}
	var b client.Backoff
	for {
		_, err := c.Set(ctx, path, data, -1)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, client.ErrNoNode):
			return fmt.Errorf("%w: %w", ErrGone, client.ErrNoNode)
		case client.IsOutcomeUnknown(err) && ctx.Err() == nil:
			got, rerr := readBack(ctx, c, path, &b)
			switch {
			case rerr != nil:
				return err
			case string(got) == string(data):
				return nil
			}
			// Not applied (or written over since): write it again.
		case !client.IsRetryable(err):
			return err
		}
		if err := b.Wait(ctx); err != nil {
			return err
		}
	}
}

// readBack reads path after a sync, retrying while the connection is down.
func readBack(ctx context.Context, c *client.Client, path string, b *client.Backoff) ([]byte, error) {
	for {
		err := c.Sync(ctx, path)
		if err == nil {
			var data []byte
			data, _, err = c.Get(ctx, path)
			if err == nil {
				return data, nil
			}
		}
		if !client.IsRetryable(err) {
			return nil, err
		}
		if err := b.Wait(ctx); err != nil {
			return nil, err
		}
	}
}

// checkPublish returns an *client.InputError for a path zr cannot have,
// or data c cannot fill zr with.
func checkPublish(c *client.Client, op, path string, data []byte) error {
	if err := checkPath(op, path); err != nil {
		return err
	}
	if err := checkFilled(op, path, data); err != nil {
		return err
	}
	return recipes.CheckData(c, op, path, data)
}

// checkFilled refuses empty data: an empty rendezvous node means that zr
// is not filled yet.
func checkFilled(op, path string, data []byte) error {
	if len(data) == 0 {
		return &client.InputError{Op: op, Path: path, Reason: "empty data (an empty rendezvous node means not filled yet)"}
	}
	return nil
}
