package rendezvous

import (
	"context"
	"errors"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Value is zr as a worker sees it.
type Value struct {
	// Exists is false when zr does not exist: not created yet, or deleted
	// (the launcher ended, or the master that owned it is gone).
	Exists bool
	// Data is the master's address; empty while zr is not filled.
	Data []byte
	// Stat is zr's Stat, nil when it does not exist. A zr created again
	// (a restarted master) has a new Czxid.
	Stat *client.Stat
}

// Filled reports whether zr exists and holds data.
func (v Value) Filled() bool { return v.Exists && len(v.Data) > 0 }

// Watch follows zr and delivers its state whenever it changes: created,
// filled, filled again, deleted. It is built on recipes.Follow and
// level-triggered like it: the last value delivered is zr's current state,
// though a change undone quickly may never be seen. When zr is deleted,
// the worker receives a Value with Exists false; the feed goes on (zr may
// come back: a restarted master in the PublishEphemeral variant), until
// ctx ends, the client is closed (client.ErrClosed), or on an error
// retrying cannot cure (an invalid path or the root: an
// *client.InputError, before anything is sent).
func (r *Rendezvous) Watch(ctx context.Context) *recipes.Feed[Value] {
	return recipes.Follow(ctx, r.c, r.reader("watch"), sameValue)
}

// reader reads zr for the call op: its errors name op.
func (r *Rendezvous) reader(op string) recipes.ReadFunc[Value] {
	return func(ctx context.Context) (Value, <-chan client.WatchEvent, error) {
		if err := checkPath(op, r.path); err != nil {
			return Value{}, nil, err
		}
		v, w, err := readValue(ctx, r.c, r.path)
		return v, w, recipes.Wrap(op, r.path, err)
	}
}

// readValue reads zr and sets a watch on it, or on its creation.
func readValue(ctx context.Context, c *client.Client, path string) (Value, <-chan client.WatchEvent, error) {
	data, st, w, err := c.GetW(ctx, path)
	if errors.Is(err, client.ErrNoNode) {
		var ok bool
		ok, _, w, err = c.ExistsW(ctx, path)
		if err == nil && ok {
			w = recipes.Fired() // created meanwhile: read it
		}
		return Value{}, w, err
	}
	return Value{Exists: true, Data: data, Stat: st}, w, err
}

func sameValue(a, b Value) bool {
	if !a.Exists || !b.Exists {
		return a.Exists == b.Exists
	}
	return a.Stat.Czxid == b.Stat.Czxid && a.Stat.Mzxid == b.Stat.Mzxid
}

// Wait returns zr's data once it is filled, for a worker. It waits for zr
// to be created if it does not exist yet, and for the master to fill it
// while it is empty. When zr is deleted after one of Wait's reads found
// it, Wait returns an error matching ErrGone: the launcher has ended. So
// it does when a later read finds zr created anew (another Czxid: a new
// launch at the same path, whose data is not for this worker). It
// returns ctx's error when ctx ends first, an error matching
// client.ErrClosed when the client is closed, and an *client.InputError
// for an invalid path or the root, which cannot be a rendezvous node.
func (r *Rendezvous) Wait(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	feed := recipes.Follow(ctx, r.c, goneReader(r.reader("wait")), sameWaited)
	for v := range feed.Values() {
		switch {
		case v.gone:
			return nil, recipes.Wrap("wait", r.path, ErrGone)
		case v.Filled():
			return v.Data, nil
		}
	}
	return nil, recipes.Wrap("wait", r.path, feed.Err())
}

// waited is zr as Wait follows it: gone says that zr is missing, or
// created anew, after an earlier read found it.
type waited struct {
	Value
	gone bool
}

// goneReader marks the values of read that find zr missing, or created
// anew (another Czxid), after an earlier read found it. The mark is made
// where zr is read, not where the values are received: the feed is
// level-triggered, and a receiver that is slow to look may never be
// handed the value in which zr existed.
func goneReader(read recipes.ReadFunc[Value]) recipes.ReadFunc[waited] {
	// Only the follower's goroutine reads and writes them.
	found := false
	var czxid int64 // of the zr found
	return func(ctx context.Context) (waited, <-chan client.WatchEvent, error) {
		v, w, err := read(ctx)
		if err != nil {
			return waited{}, w, err
		}
		gone := found && (!v.Exists || createdAt(v) != czxid)
		if v.Exists && !found {
			found, czxid = true, createdAt(v)
		}
		return waited{v, gone}, w, nil
	}
}

// createdAt is the Czxid of an existing zr.
func createdAt(v Value) int64 {
	if v.Stat == nil {
		return 0
	}
	return v.Stat.Czxid
}

func sameWaited(a, b waited) bool { return a.gone == b.gone && sameValue(a.Value, b.Value) }
