package main

import (
	"context"
	"errors"

	"github.com/zkit-dev/zkit/client"
)

// nodeWatch is what create -e holds: an ephemeral node of the client's
// session. It ends when the node is gone, deleted or gone with the
// session, or when its context ends (then without an error).
type nodeWatch struct {
	done chan struct{}
	err  error
}

// errDeleted is why a node that was deleted is gone.
var errDeleted = errors.New("the node was deleted")

// watchNode watches the node at path until it is gone or ctx ends.
func watchNode(ctx context.Context, c *client.Client, path string) *nodeWatch {
	w := &nodeWatch{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.err = w.watch(ctx, c, path)
	}()
	return w
}

func (w *nodeWatch) Done() <-chan struct{} { return w.done }

// Err is why the node is gone, once Done is closed; nil if ctx ended.
func (w *nodeWatch) Err() error { return w.err }

func (w *nodeWatch) watch(ctx context.Context, c *client.Client, path string) error {
	for {
		var there bool
		var events <-chan client.WatchEvent
		err := c.Retry(ctx, func(ctx context.Context) (err error) {
			there, _, events, err = c.ExistsW(ctx, path)
			return err
		})
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		case !there:
			return errDeleted
		}
		select {
		case ev := <-events:
			switch ev.Type {
			case client.EventNodeDeleted:
				return errDeleted
			case client.EventNotWatching:
				return ev.Err
			}
		case <-ctx.Done():
			return nil
		}
	}
}
