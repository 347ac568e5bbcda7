package membership

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Entry is one member of a group as read from ZooKeeper.
type Entry struct {
	ID   string
	Data []byte
	Stat *client.Stat
}

// fetchers bounds the reads of member nodes in flight for one listing.
const fetchers = 32

// list reads the members of the group at path, sorted by id.
func list(ctx context.Context, c *client.Client, path string) ([]Entry, error) {
	if err := checkPath("list", path); err != nil {
		return nil, err
	}
	names, _, err := c.Children(ctx, path)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries := make([]*Entry, len(names))
	err = fetch(ctx, len(names), func(ctx context.Context, i int) error {
		data, st, err := c.Get(ctx, client.JoinPath(path, names[i]))
		if errors.Is(err, client.ErrNoNode) {
			return nil // left meanwhile
		}
		entries[i] = &Entry{ID: names[i], Data: data, Stat: st}
		return err
	})
	if err != nil {
		return nil, err
	}
	return sorted(entries), nil
}

// followConnection counts the client's (re)connections. The reader trusts
// its watches only within one connection: go-zookeeper re-sets them after
// a reconnect, but concurrently with other requests, with a "last zxid
// seen" that may already include changes the watches never reported. So
// after each reconnect the reader reads everything again.
func (r *groupReader) followConnection(ctx context.Context) {
	sub := r.c.Subscribe()
	go func() {
		defer sub.Close()
		for {
			select {
			case ev, ok := <-sub.Events():
				if !ok {
					return
				}
				if ev.State == client.StateConnected || ev.State == client.StateReconnected {
					r.epoch.Add(1)
					r.signal(client.WatchEvent{})
				}
			case <-ctx.Done():
				return
			}
		}
	}()
}

// groupReader reads a group for Follow, keeping what it read: after an
// event it lists the children again only when the children watch fired,
// and reads again only the members whose own watch fired (or that are
// new), so that a join costs one listing and one read, not one per member.
type groupReader struct {
	c      *client.Client
	path   string
	notify chan client.WatchEvent // every watch set by the reader fires here

	epoch  atomic.Int64 // connections so far
	listed atomic.Bool  // the children watch is set and has not fired
	seen   int64        // the epoch of what the reader holds
	names  []string
	cache  map[string]*cached
}

// cached is one member as last read, with the state of its data watch.
type cached struct {
	entry Entry
	stale atomic.Bool // its watch fired: read it again
}

func (r *groupReader) read(ctx context.Context) ([]Entry, <-chan client.WatchEvent, error) {
	if err := checkPath("watch", r.path); err != nil {
		return nil, nil, err
	}
	if e := r.epoch.Load(); e != r.seen {
		r.seen = e
		r.listed.Store(false)
		clear(r.cache)
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
	fresh := make([]*cached, len(todo))
	err := fetch(ctx, len(todo), func(fctx context.Context, j int) error {
		name := r.names[todo[j]]
		data, st, w, err := r.c.GetW(fctx, client.JoinPath(r.path, name))
		if errors.Is(err, client.ErrNoNode) {
			return nil // left meanwhile: the children watch tells
		}
		if err != nil {
			return err
		}
		e := &cached{entry: Entry{ID: name, Data: data, Stat: st}}
		r.forward(ctx, w, func() { e.stale.Store(true) })
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
	entries := make([]*Entry, 0, len(r.names))
	for _, name := range r.names {
		if e := r.cache[name]; e != nil {
			entries = append(entries, &e.entry)
		}
	}
	return sorted(entries), r.notify, nil
}

// list lists the group's children with a watch (or, while the group's node
// does not exist, watches for its creation) and forgets the members that
// are gone.
func (r *groupReader) list(ctx context.Context) error {
	names, _, w, err := r.c.ChildrenW(ctx, r.path)
	if errors.Is(err, client.ErrNoNode) {
		var ok bool
		ok, _, w, err = r.c.ExistsW(ctx, r.path)
		if err == nil && ok {
			w = recipes.Fired() // created meanwhile: list it
		}
		names = nil
	}
	if err != nil {
		return err
	}
	r.listed.Store(true)
	r.forward(ctx, w, func() { r.listed.Store(false) })
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

// forward runs mark when w fires, then tells Follow to read again.
func (r *groupReader) forward(ctx context.Context, w <-chan client.WatchEvent, mark func()) {
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
func (r *groupReader) signal(ev client.WatchEvent) {
	select {
	case r.notify <- ev:
	default: // a read is due already
	}
}

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
	for w := 0; w < min(n, fetchers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	wg.Wait()
	return first
}

// sorted drops nil entries and sorts the rest by id.
func sorted(entries []*Entry) []Entry {
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if e != nil {
			out = append(out, *e)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// sameGroup reports whether two snapshots show the same members with the
// same data versions.
func sameGroup(a, b []Entry) bool {
	return slices.EqualFunc(a, b, func(x, y Entry) bool {
		return x.ID == y.ID && x.Stat.Czxid == y.Stat.Czxid && x.Stat.Mzxid == y.Stat.Mzxid
	})
}
