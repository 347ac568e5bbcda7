package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// Cache is a live mirror of a node, its children or its subtree. It is safe
// for concurrent use. Close it when done.
type Cache struct {
	cl   *client.Client
	path string // the caller's, inside the client's namespace
	cfg  config

	oneShot atomic.Bool   // the server refused addWatch, or WithOneShotWatches
	syncReq chan struct{} // a WaitFor asks the engine for a sync

	mu        sync.Mutex
	snap      *Snapshot // nil until the first load
	gen       int       // reloads after a session expiry
	changed   chan struct{}
	stale     bool
	since     time.Time
	err       error // why the cache stopped
	want      int64 // the highest zxid a WaitFor waits for
	events    *delivery
	evDirty   map[string]struct{} // paths changed since the events were last computed
	evAll     bool                // or everything
	deletions deletions           // deletes not yet taken by the events (deletions.go)

	// The cache's goroutine's alone: what it holds of the current session.
	feed  *client.WatchFeed    // the persistent watch
	armed *armed               // one-shot mode: the watches the reads set
	sub   *client.Subscription // one-shot mode: wakes the engine when a watch fires

	life context.Context
	stop context.CancelCauseFunc
	done chan struct{}
}

// OpenNode opens a cache of the node at path alone.
func OpenNode(ctx context.Context, c *client.Client, path string, opts ...Option) (*Cache, error) {
	// Clipped: appending must not write into the caller's slice, which
	// other calls may be reading.
	return Open(ctx, c, path, append(slices.Clip(opts), WithDepth(0))...)
}

// OpenChildren opens a cache of the node at path and its children.
func OpenChildren(ctx context.Context, c *client.Client, path string, opts ...Option) (*Cache, error) {
	return Open(ctx, c, path, append(slices.Clip(opts), WithDepth(1))...)
}

// OpenTree opens a cache of the subtree at path (WithDepth limits it).
func OpenTree(ctx context.Context, c *client.Client, path string, opts ...Option) (*Cache, error) {
	return Open(ctx, c, path, opts...)
}

// Open opens a cache of the subtree at path, as deep as WithDepth says
// (the whole subtree by default), and returns once it holds the first
// snapshot, with ctx's error, or with the error that stopped it (a
// *LimitError for a tree too large). The node at path need not exist: the
// cache then holds nothing until it is created.
func Open(ctx context.Context, c *client.Client, path string, opts ...Option) (*Cache, error) {
	if err := client.CheckPath("cache", path); err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.depth < 0 || cfg.maxNodes <= 0 || cfg.maxBytes <= 0 {
		return nil, &client.InputError{Op: "cache", Path: path,
			Reason: fmt.Sprintf("depth %d, node limit %d and byte limit %d must be positive", cfg.depth, cfg.maxNodes, cfg.maxBytes)}
	}
	if c.Context().Err() != nil {
		return nil, errClientClosed // before the cache's goroutine starts
	}
	cc := &Cache{cl: c, path: path, cfg: cfg, syncReq: make(chan struct{}, 1),
		changed: make(chan struct{}), done: make(chan struct{}), evDirty: map[string]struct{}{}}
	cc.oneShot.Store(cfg.oneShot)
	cc.life, cc.stop = context.WithCancelCause(context.Background())
	unhook := context.AfterFunc(c.Context(), func() { cc.stop(errClientClosed) })
	untrack := cc.tracked()
	go func() {
		defer unhook()
		defer untrack()
		cc.run()
	}()
	if _, err := cc.WaitFor(ctx, 0); err != nil {
		cc.Close()
		return nil, err
	}
	return cc, nil
}

// Snapshot returns the latest snapshot. While the cache is stale (see
// Stale) it is the last one taken before the connection was lost.
func (c *Cache) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}

// WaitFor returns a snapshot at zxid or later: read your writes. Pass the
// zxid of a write (a Stat's Mzxid, the zxid of a create) or a client's
// LastZxid after its writes. When the cache has not reached zxid yet it
// asks the server for a sync, and waits until ctx ends. On a stopped cache
// whose last snapshot is older than zxid it fails at once, with the error
// that stopped it.
func (c *Cache) WaitFor(ctx context.Context, zxid int64) (*Snapshot, error) {
	asked := false
	for {
		c.mu.Lock()
		s, ch, err := c.snap, c.changed, c.err
		if s != nil && s.zxid >= zxid {
			c.mu.Unlock()
			return s, nil
		}
		if err != nil {
			c.mu.Unlock()
			return nil, err
		}
		if zxid > c.want {
			c.want = zxid
		}
		c.mu.Unlock()
		if !asked && s != nil {
			asked = true
			select {
			case c.syncReq <- struct{}{}:
			default: // asked already
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("zkit: cache %s: wait for zxid %#x: %w", c.path, zxid, ctx.Err())
		}
	}
}

// Stale reports whether the cache's client is disconnected (or the cache
// is reading the tree again after that, or after a failed read), and since
// when. Its snapshot is then the last one taken, and stays so until the
// client is connected and the cache has read the tree again. The client
// does not connect to a server in read-only mode (ZooKeeper's
// readonlymode.enabled: a server cut off from its quorum, whose data may
// be old): the cache stays stale until the client reaches one that is not.
func (c *Cache) Stale() (bool, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stale, c.since
}

// PersistentWatch reports whether the cache follows the tree with one
// persistent watch (ZooKeeper 3.6 and later), recursive but for a cache of
// one node, rather than one-shot watches.
func (c *Cache) PersistentWatch() bool { return !c.oneShot.Load() }

// Done is closed when the cache stops: closed, its client closed, or
// stopped by an error (Err).
func (c *Cache) Done() <-chan struct{} { return c.done }

// Err is nil while the cache runs, then why it stopped: ErrClosed, or a
// *LimitError, or an error of the server's no retry cures (a node the
// client's credentials may not read: client.ErrNoAuth).
func (c *Cache) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close stops the cache: its watch is removed from the client's session
// (in the background; see client.WatchFeed.Close), and Events is closed.
func (c *Cache) Close() {
	c.stop(ErrClosed)
	<-c.done
}

// run follows the tree until the cache stops: on each session of the
// client, it sets the watch, loads the tree and follows it (serve), and
// loads it again when that breaks.
func (c *Cache) run() {
	defer close(c.done)
	defer c.endSession()
	log := c.cfg.logger
	var b client.Backoff
	var sess *client.Session
	for c.life.Err() == nil {
		s, err := c.cl.WaitConnected(c.life)
		if err != nil {
			break
		}
		if s != sess {
			if sess != nil {
				log.Info("cache session expired: reloading under a new one", "path", c.path)
				c.mu.Lock()
				c.gen++
				c.mu.Unlock()
			}
			c.endSession()
			sess = s
		}
		served, err := c.serve(s)
		if served {
			// Only a load that served a snapshot resets the delay: one
			// that fails before (the server sheds or refuses its reads,
			// say) is attempted again less and less often.
			b.Reset()
		}
		var fatal *fatalError
		switch {
		case c.life.Err() != nil:
		case errors.As(err, &fatal):
			c.endSession()
			c.fail(fatal.err)
			return
		case errors.Is(err, errFallback):
			log.Info("cache falls back to one-shot watches", "path", c.path)
			c.oneShot.Store(true)
			c.endSession()
		default:
			log.Info("cache reloads", "path", c.path, "err", err)
			c.setStale()
			b.Wait(c.life)
		}
	}
	c.fail(context.Cause(c.life))
}

// endSession lets go of what the cache holds of its session: its watches.
func (c *Cache) endSession() {
	if c.feed != nil {
		c.feed.Close()
		c.feed = nil
	}
	if c.sub != nil {
		c.sub.Close()
		c.sub = nil
	}
	c.armed = nil
}

// errResync ends a load whose persistent watch missed events: the client
// reconnected.
var errResync = errors.New("the client reconnected: events may have been missed")

// serve sets the session's watch if need be, loads the tree and follows
// it until something breaks the load, which it returns, with whether the
// load served a snapshot.
func (c *Cache) serve(sess *client.Session) (served bool, err error) {
	if err := c.watch(); err != nil {
		return false, err
	}
	q := newReads(c.life, c.cl, c.armed)
	e := newEngine(c, q, c.armed)
	defer func() { served = e.published }()
	// What the watches reported before the load is in it: the load's reads
	// go after.
	if err := c.take(func(client.WatchEvent) error { return nil }); err != nil {
		return false, err
	}
	var feed <-chan client.WatchEvent
	if c.feed != nil {
		feed = c.feed.Events()
	}
	var subEvents <-chan client.Event
	if c.sub != nil {
		subEvents = c.sub.Events()
	}
	changed := c.cl.Changed()
	e.start()
	for {
		if q.idle() {
			// Every event up to the client's LastZxid is in the feed or
			// the watches' channels (see engine).
			zxid := c.cl.LastZxid()
			if err := c.take(e.event); err != nil {
				return false, err
			}
			if q.idle() {
				e.publish(zxid)
			}
		}
		select {
		case ev, ok := <-feed:
			if err := c.fed(ev, ok, e.event); err != nil {
				return false, err
			}
		case res := <-q.out:
			q.done(res)
			if err := e.reply(res); err != nil {
				return false, err
			}
		case ev, ok := <-subEvents:
			if !ok && errors.Is(c.sub.Err(), client.ErrSubscriptionOverflow) {
				// The cache fell behind its client's events: the news of
				// watches that fired is lost, not their events, which
				// their channels hold. Subscribe again, then look at
				// every watch.
				c.cfg.logger.Info("cache fell behind its client's events: looking at every watch", "path", c.path)
				c.sub.Close()
				c.sub = c.cl.Subscribe()
				subEvents = c.sub.Events()
				if err := c.take(e.event); err != nil {
					return false, err
				}
				continue
			}
			if !ok {
				subEvents = nil // the client is closed: so is the cache, by now
				continue
			}
			if ev.State != client.StateNone {
				continue
			}
			for _, fired := range c.armed.poll(ev.Path) {
				if err := e.event(fired); err != nil {
					return false, err
				}
			}
		case <-changed:
			changed = c.cl.Changed()
			if suspended, _ := c.cl.Suspended(); suspended || c.cl.Session() != sess || !sess.Alive() {
				return false, errors.New("the client was disconnected")
			}
		case <-c.syncReq:
			if c.cl.LastZxid() < c.wanted() {
				q.send(request{op: readSync})
			}
		case <-c.life.Done():
			return false, context.Cause(c.life)
		}
	}
}

// watch sets the session's persistent watch (or, in one-shot mode, readies
// the bookkeeping of its one-shot watches), unless it is set.
func (c *Cache) watch() error {
	if c.oneShot.Load() {
		if c.armed == nil {
			c.armed, c.sub = newArmed(), c.cl.Subscribe()
		}
		return nil
	}
	if c.feed != nil {
		return nil
	}
	mode := client.Recursive
	if c.cfg.depth == 0 {
		// A cache of the root alone: the server then tells it of the
		// root's own changes (its children's comings and goings as
		// NodeChildrenChanged) and of nothing below.
		mode = client.NonRecursive
	}
	feed, err := c.cl.Watch(c.life, c.path, mode, client.WithWatchBuffer(feedBuffer))
	switch {
	case errors.Is(err, client.ErrUnimplemented):
		return errFallback
	case errors.Is(err, client.ErrNoAuth):
		return &fatalError{err}
	case err != nil:
		return err
	}
	c.feed = feed
	return nil
}

// feedBuffer is how many events the cache's feed holds while the cache is
// busy: a burst of more changes than that before the cache takes them
// makes it read the tree again.
const feedBuffer = 4096

// take hands every event the feed or the one-shot watches hold to apply,
// without waiting.
func (c *Cache) take(apply func(client.WatchEvent) error) error {
	if c.armed != nil {
		for _, ev := range c.armed.pollAll() {
			if err := apply(ev); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		select {
		case ev, ok := <-c.feed.Events():
			if err := c.fed(ev, ok, apply); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// fed handles what the feed gave (ok false: it ended): the event for
// apply, or why the load cannot go on. A feed that ended is let go: the
// next load watches again (the session was lost, or the cache fell behind
// its buffer).
func (c *Cache) fed(ev client.WatchEvent, ok bool, apply func(client.WatchEvent) error) error {
	switch {
	case !ok:
		err := c.feed.Err()
		c.feed = nil
		return fmt.Errorf("the watch ended: %w", err)
	case ev.Type == client.EventResync:
		return errResync
	}
	return apply(ev)
}

// publishHook, when set (by tests), sees every snapshot a cache takes.
var publishHook func(s *Snapshot)

// publish makes s the current snapshot, unless it is older than the
// current one (a server behind the last one: it cannot be, as the cache
// connects with the last zxid it saw, which servers behind it refuse).
// first is the first snapshot of a connection: the cache is no longer
// stale.
//
// changed are the paths that differ from the current snapshot, or nil for
// a snapshot read anew.
func (c *Cache) publish(s *Snapshot, first bool, changed []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != nil && s.zxid < c.snap.zxid {
		return false
	}
	s.gen = c.gen
	c.snap = s
	if c.events != nil { // before Events is called there is nothing to track
		c.evAll = c.evAll || changed == nil
		for _, p := range changed {
			c.evDirty[p] = struct{}{}
		}
	}
	if publishHook != nil {
		publishHook(s)
	}
	if first {
		c.stale, c.since = false, time.Time{}
	}
	close(c.changed)
	c.changed = make(chan struct{})
	return true
}

func (c *Cache) current() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}

func (c *Cache) wanted() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.want
}

func (c *Cache) setStale() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stale {
		c.stale, c.since = true, time.Now()
		close(c.changed)
		c.changed = make(chan struct{})
	}
}

func (c *Cache) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		var limit *LimitError
		if !errors.Is(err, ErrClosed) && !errors.Is(err, client.ErrClosed) && !errors.As(err, &limit) {
			err = fmt.Errorf("zkit: cache %s: %w", c.path, err) // a LimitError names it already
		}
		c.err = err
		c.cfg.logger.Info("cache stopped", "path", c.path, "err", err)
		close(c.changed)
		c.changed = make(chan struct{})
	}
	c.stop(err)
}

// under reports whether a path lies in the cache's subtree.
func (c *Cache) under(p string) bool {
	return p == c.path || c.path == "/" || strings.HasPrefix(p, c.path+"/")
}

// key is the key of a path in the subtree (see keyOf).
func (c *Cache) key(p string) string {
	k, _ := keyOf(c.path, p)
	return k
}

// depth is how many levels a path in the subtree lies below the root.
func (c *Cache) depth(p string) int {
	if p == c.path {
		return 0
	}
	rest := p[len(c.path):]
	if c.path == "/" {
		rest = p
	}
	return strings.Count(rest, "/")
}
