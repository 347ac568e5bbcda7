package discovery

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Watch follows the instances of service and delivers all of them, sorted
// by node name, disabled ones included, whenever one is registered,
// unregistered or updated. It is built on recipes.Follow and
// level-triggered like it: the Values channel holds only the latest
// snapshot, and after churn, a burst or a reconnect the last snapshot
// delivered is the true set of instances. A service without a node is an
// empty snapshot. Nodes whose data is not an instance are left out (and
// logged, WithLogger).
//
// While the connection is suspended the last snapshot stands; it is read
// again once the client is connected, under the same session or a new one.
// The feed ends when ctx ends, when the client is closed
// (client.ErrClosed), or on an error retrying cannot cure (an invalid base
// or service name: an *client.InputError, before anything is sent).
func (d *Discovery) Watch(ctx context.Context, service string) *recipes.Feed[[]Instance] {
	path := client.JoinPath(d.base, service)
	check := checkName("watch", d.base, "service name", service)
	r := &serviceReader{c: d.c, path: path, log: d.cfg.Log(), notify: make(chan client.WatchEvent, 1), cache: map[string]*cached{}}
	if check == nil {
		r.followConnection(ctx)
	}
	read := func(ctx context.Context) ([]Instance, <-chan client.WatchEvent, error) {
		if check != nil {
			return nil, nil, check
		}
		instances, w, err := r.read(ctx)
		return instances, w, recipes.Wrap("watch", path, err)
	}
	return recipes.Follow(ctx, d.c, read, sameInstances)
}

// serviceReader reads a service's instances for Follow, keeping what it
// read: after an event it lists the children again only when the children
// watch fired, and reads again only the instances whose own watch fired
// (or that are new), so that a registration costs one listing and one
// read, not one per instance.
type serviceReader struct {
	c      *client.Client
	path   string
	log    *slog.Logger
	notify chan client.WatchEvent // every watch set by the reader fires here

	epoch  atomic.Int64 // connections so far
	listed atomic.Bool  // the children watch is set and has not fired
	seen   int64        // the epoch of what the reader holds
	names  []string
	cache  map[string]*cached
}

// cached is one instance node as last read, with the state of its data
// watch. inst is nil for a node whose data is not an instance.
type cached struct {
	inst  *Instance
	stale atomic.Bool // its watch fired: read it again
}

// followConnection counts the client's (re)connections. The reader trusts
// its watches only within one connection: after each reconnect it reads
// everything again, as events from while it was disconnected may be lost.
func (r *serviceReader) followConnection(ctx context.Context) {
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

func (r *serviceReader) read(ctx context.Context) ([]Instance, <-chan client.WatchEvent, error) {
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
		node := client.JoinPath(r.path, r.names[todo[j]])
		data, st, w, err := r.c.GetW(fctx, node)
		if errors.Is(err, client.ErrNoNode) {
			return nil // unregistered meanwhile: the children watch tells
		}
		if err != nil {
			return err
		}
		e := &cached{}
		if inst, err := decode(node, data, st); err == nil {
			e.inst = &inst
		} else {
			r.log.Warn("zkit: left out a node that is not a service instance", "node", node, "err", err)
		}
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
	found := make([]*Instance, 0, len(r.names))
	for _, name := range r.names {
		if e := r.cache[name]; e != nil {
			found = append(found, e.inst)
		}
	}
	return collect(found), r.notify, nil
}

// list lists the service's children with a watch (or, while the service's
// node does not exist, watches for its creation) and forgets the instances
// that are gone.
func (r *serviceReader) list(ctx context.Context) error {
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
func (r *serviceReader) forward(ctx context.Context, w <-chan client.WatchEvent, mark func()) {
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
func (r *serviceReader) signal(ev client.WatchEvent) {
	select {
	case r.notify <- ev:
	default: // a read is due already
	}
}

// sameInstances reports whether two snapshots show the same nodes at the
// same versions.
func sameInstances(a, b []Instance) bool {
	return slices.EqualFunc(a, b, func(x, y Instance) bool {
		return x.Path == y.Path && x.Stat.Czxid == y.Stat.Czxid && x.Stat.Mzxid == y.Stat.Mzxid
	})
}
