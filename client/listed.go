package client

import (
	"context"
	"slices"
)

// Creates listed in the same round trip.
//
// A recipe that creates a node in a directory usually lists the directory
// next, to learn where its node stands. ZooKeeper answers a session's
// requests in the order they were sent, so the listing need not wait for
// the create's reply: sent right behind the create, it is answered right
// after it and shows the new node and everything created before it. The
// listing is queued once the connection wrapper has seen the create on its
// way out (the wire client writes that frame before it takes the next
// request), which saves the recipe a round trip.

// Listing is a node's children and Stat, as one listing saw them.
type Listing struct {
	Children []string
	Stat     *Stat
}

// listedCreate runs create (which creates a node under parent, noted in
// slot) and lists parent behind it. The listing is nil when create fails,
// and when it does not show the created node.
func (c *Client) listedCreate(ctx context.Context, parent string, slot *createSlot, create func() (string, error)) (string, *Listing, error) {
	stop := make(chan struct{})
	listed := c.listAfter(ctx, parent, slot, stop)
	p, err := create()
	close(stop)
	if err != nil {
		return "", nil, err
	}
	l := <-listed
	if _, name := SplitPath(p); l == nil || !slices.Contains(l.Children, name) {
		return p, nil, nil
	}
	return p, l, nil
}

// listAfter lists parent as soon as a create of slot's path has been
// written, so that the server lists after creating; without a slot (nil),
// or when stop is closed first (the create has returned), it lists then.
// The first create of the path written after slot was taken could be
// another caller's (the same path asked for twice; a create cut off by its
// context that the wire client still sends): the listing went out too early
// then, and does not show the caller's node, which is how listedCreate
// tells. A create that fails still costs its listing if it was written (a
// missing parent: the listing fails too). A failed listing is nil.
func (c *Client) listAfter(ctx context.Context, parent string, slot *createSlot, stop <-chan struct{}) <-chan *Listing {
	out := make(chan *Listing, 1)
	var written <-chan struct{}
	if slot != nil {
		written = slot.written
	}
	c.workers.run(func() {
		select {
		case <-written:
		case <-stop:
		}
		children, st, err := c.Children(ctx, parent)
		if err != nil {
			out <- nil
			return
		}
		out <- &Listing{children, st}
	})
	return out
}
