package recipes

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/zkit-dev/zkit/client"
)

// Decode turns a child of a node (its name, data and Stat) into the value
// ReadChildren and ChildrenReader deliver for it, or nil to leave it out.
type Decode[T any] func(name string, data []byte, st *client.Stat) *T

// ReadChildren reads the children of path and their data, and returns
// what decode makes of them, in the order of the children's names. A node
// that does not exist has no children, and a child deleted meanwhile is
// left out.
func ReadChildren[T any](ctx context.Context, c *client.Client, path string, decode Decode[T]) ([]T, error) {
	names, _, err := c.Children(ctx, path)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	values := make([]*T, len(names))
	err = fetch(ctx, len(names), func(ctx context.Context, i int) error {
		data, st, err := c.Get(ctx, client.JoinPath(path, names[i]))
		switch {
		case errors.Is(err, client.ErrNoNode):
			return nil // deleted meanwhile
		case err != nil:
			return err
		}
		values[i] = decode(names[i], data, st)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return present(values), nil
}

// ChildrenReader returns the read function of a Follow of the children of
// path and their data: it delivers what decode makes of them, in the order
// of the children's names, whenever a child is created, deleted or
// written. While path does not exist it delivers no children and watches
// for its creation.
//
// The reader keeps what it read: after an event it lists the children
// again only when the children watch fired, and reads again only the
// children whose own watch fired (or that are new), so that a new child
// costs one listing and one read, not one per child. It trusts its watches
// only within one connection: go-zookeeper sets them again after a
// reconnect, but concurrently with other requests, with a "last zxid seen"
// that may already include changes the watches never reported. So after
// each reconnect (and after it fell behind the client's events, which may
// have hidden one: client.ErrSubscriptionOverflow) it reads everything
// again, and stops waiting for the watches it set before (the client
// keeps them until they fire; a node that never changes would otherwise
// hold one goroutine per reconnect). It stops following the connection
// when ctx ends.
func ChildrenReader[T any](ctx context.Context, c *client.Client, path string, decode Decode[T]) ReadFunc[[]T] {
	return newChildrenReader(ctx, c, path, decode, c.Subscribe()).read
}

// newChildrenReader returns a ChildrenReader's reader, which counts the
// client's connections on sub.
func newChildrenReader[T any](ctx context.Context, c *client.Client, path string, decode Decode[T], sub *client.Subscription) *childrenReader[T] {
	r := &childrenReader[T]{c: c, path: path, decode: decode, notify: make(chan client.WatchEvent, 1), cache: map[string]*child[T]{}}
	r.life = ctx
	r.ctx, r.stopWaiting = context.WithCancel(ctx)
	r.followConnection(ctx, sub)
	return r
}

// childrenReader is the state of a ChildrenReader.
type childrenReader[T any] struct {
	c      *client.Client
	path   string
	decode Decode[T]
	notify chan client.WatchEvent // every watch set by the reader fires here

	epoch  atomic.Int64 // connections so far
	listed atomic.Bool  // the children watch is set and has not fired
	seen   int64        // the epoch of what the reader holds
	names  []string
	cache  map[string]*child[T]

	// ctx ends the goroutines that wait for the watches set in the epoch
	// seen (forward), or when life, the reader's context, ends;
	// stopWaiting ends it. Only read changes them.
	life        context.Context
	ctx         context.Context
	stopWaiting context.CancelFunc
}

// child is one child as last read, with the state of its data watch.
type child[T any] struct {
	value *T          // nil: left out by decode
	stale atomic.Bool // its watch fired: read it again
}

// followConnection counts the client's (re)connections on sub, and one
// more each time sub falls behind the client's events (it then subscribes
// again): a reconnect may have been among those dropped.
func (r *childrenReader[T]) followConnection(ctx context.Context, sub *client.Subscription) {
	go func() {
		defer func() { sub.Close() }()
		for {
			select {
			case ev, ok := <-sub.Events():
				switch {
				case !ok && errors.Is(sub.Err(), client.ErrSubscriptionOverflow):
					sub.Close()
					sub = r.c.Subscribe()
					r.epoch.Add(1)
					r.signal(client.WatchEvent{})
				case !ok:
					return
				case ev.State == client.StateConnected, ev.State == client.StateReconnected:
					r.epoch.Add(1)
					r.signal(client.WatchEvent{})
				}
			case <-ctx.Done():
				return
			}
		}
	}()
}

func (r *childrenReader[T]) read(ctx context.Context) ([]T, <-chan client.WatchEvent, error) {
	if e := r.epoch.Load(); e != r.seen {
		r.seen = e
		r.listed.Store(false)
		clear(r.cache)
		r.stopWaiting()
		r.ctx, r.stopWaiting = context.WithCancel(r.life)
	}
	if !r.listed.Load() {
		if err := r.list(ctx); err != nil {
			return nil, nil, err
		}
	}
	var todo []int
	for i, name := range r.names {
		if e := r.cache[name]; e == nil || e.stale.Load() {
			todo = append(todo, i)
		}
	}
	fresh := make([]*child[T], len(todo))
	err := fetch(ctx, len(todo), func(fctx context.Context, j int) error {
		name := r.names[todo[j]]
		data, st, w, err := r.c.GetW(fctx, client.JoinPath(r.path, name))
		if errors.Is(err, client.ErrNoNode) {
			return nil // deleted meanwhile: the children watch tells
		}
		if err != nil {
			return err
		}
		e := &child[T]{value: r.decode(name, data, st)}
		r.forward(w, func() { e.stale.Store(true) })
		fresh[j] = e
		return nil
	})
	for j, e := range fresh {
		if e != nil {
			r.cache[r.names[todo[j]]] = e
		} else {
			delete(r.cache, r.names[todo[j]])
		}
	}
	if err != nil {
		return nil, nil, err
	}
	values := make([]*T, 0, len(r.names))
	for _, name := range r.names {
		if e := r.cache[name]; e != nil {
			values = append(values, e.value)
		}
	}
	return present(values), r.notify, nil
}

// list lists the children with a watch (or, while the node does not
// exist, watches for its creation) and forgets the children that are gone.
func (r *childrenReader[T]) list(ctx context.Context) error {
	names, _, w, err := r.c.ChildrenW(ctx, r.path)
	if errors.Is(err, client.ErrNoNode) {
		var ok bool
		ok, _, w, err = r.c.ExistsW(ctx, r.path)
		if err == nil && ok {
			w = Fired() // created meanwhile: list it
		}
		names = nil
	}
	if err != nil {
		return err
	}
	r.listed.Store(true)
	r.forward(w, func() { r.listed.Store(false) })
	slices.Sort(names)
	r.names = names
	keep := make(map[string]bool, len(names))
	for _, n := range names {
		keep[n] = true
	}
	for n := range r.cache {
		if !keep[n] {
			delete(r.cache, n)
		}
	}
	return nil
}

// forward runs mark when w fires, then tells Follow to read again, until
// the reader stops waiting for the watches of this epoch.
func (r *childrenReader[T]) forward(w <-chan client.WatchEvent, mark func()) {
	ctx := r.ctx
	go func() {
		select {
		case ev := <-w:
			mark()
			r.signal(ev)
		case <-ctx.Done():
		}
	}()
}

// signal tells Follow to read again.
func (r *childrenReader[T]) signal(ev client.WatchEvent) {
	select {
	case r.notify <- ev:
	default: // a read is due already
	}
}

// present returns the values that are not nil, in order.
func present[T any](values []*T) []T {
	out := make([]T, 0, len(values))
	for _, v := range values {
		if v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// fetchers bounds the reads of children in flight for one listing.
const fetchers = 32

// fetch runs get(i) for i in [0, n) with at most fetchers in flight, and
// returns the first error.
func fetch(ctx context.Context, n int, get func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		next  atomic.Int64
	)
	for range min(n, fetchers) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := get(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
