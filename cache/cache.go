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
	"github.com/zkit-dev/zkit/internal/jute"
)

// Cache is a live mirror of a node, its children or its subtree. It is safe
// for concurrent use. Close it when done.
type Cache struct {
	cl   *client.Client
	path string // the caller's
	root string // the server's
	ns   string
	cfg  config
	wire client.Wire

	oneShot atomic.Bool // the server refused addWatch, or WithOneShotWatches

	mu      sync.Mutex
	snap    *Snapshot // nil until the first load
	gen     int       // reloads after a session expiry
	changed chan struct{}
	stale   bool
	since   time.Time
	err     error // why the cache stopped
	want    int64 // the highest zxid a WaitFor waits for
	eng     *engine
	sess    session // the current session's id and password, for tests
	events  *delivery
	evDirty map[string]struct{} // paths changed since the events were last computed
	evAll   bool                // or everything

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
		return nil, errClientClosed // before the cache's goroutine dials
	}
	w := c.Wire()
	root := path
	if w.Namespace != "" {
		root = strings.TrimSuffix(w.Namespace+path, "/")
	}
	cc := &Cache{cl: c, path: path, root: root, ns: w.Namespace, cfg: cfg, wire: w,
		changed: make(chan struct{}), done: make(chan struct{}), evDirty: map[string]struct{}{}}
	cc.oneShot.Store(cfg.oneShot)
	cc.life, cc.stop = context.WithCancelCause(context.Background())
	unhook := context.AfterFunc(c.Context(), func() { cc.stop(errClientClosed) })
	cc.tracked()
	go func() {
		defer unhook()
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
		s, ch, err, eng := c.snap, c.changed, c.err, c.eng
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
		if !asked && eng != nil && s != nil {
			asked = true
			eng.sync()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("zkit: cache %s: wait for zxid %#x: %w", c.path, zxid, ctx.Err())
		}
	}
}

// Stale reports whether the cache has lost its connection (or is
// reloading after one), and since when. Its snapshot is then the last one
// taken, and stays so until the cache is connected and has read the tree
// again. The cache never connects to a server in read-only mode
// (ZooKeeper's readonlymode.enabled: a server cut off from its quorum,
// whose data may be old): it stays stale until it reaches one that is not.
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
// *LimitError, or an error of the server's no reconnect cures (the
// client's credentials refused, a node it may not read).
func (c *Cache) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close stops the cache and ends its session. A cache closed while it is
// cut off from the servers cannot tell them: its session then lives on
// until the servers expire it.
func (c *Cache) Close() {
	c.stop(ErrClosed)
	<-c.done
}

// run keeps a connection and its engine until the cache stops.
func (c *Cache) run() {
	defer close(c.done)
	log := c.cfg.logger
	sess := &session{}
	lost := false
	next := 0
	var b client.Backoff
	for c.life.Err() == nil {
		w, k, err := dial(c.life, c.cl, c.wire, next, sess)
		if errors.Is(err, errExpired) {
			log.Info("cache session expired: reloading under a new one", "path", c.path)
			// The new session starts from the last zxid seen, so that a
			// server behind the snapshots already taken refuses it.
			sess, lost = &session{lastZxid: sess.lastZxid}, true
			continue
		}
		if err != nil {
			c.setStale()
			next = (k + 1) % len(c.wire.Servers)
			log.Debug("cache connection attempt failed", "path", c.path, "err", err)
			b.Wait(c.life)
			continue
		}
		next = k
		served, err := c.serve(w, lost)
		if served {
			// Only a connection that served a snapshot resets the delay:
			// one that fails before (the server sheds or refuses its
			// reads, say) is attempted again less and less often.
			b.Reset()
		}
		lost = false
		var fatal *fatalError
		if errors.As(err, &fatal) && c.life.Err() == nil {
			w.closeSession()
			c.fail(fatal.err)
			return
		}
		w.close()
		w.wg.Wait()
		switch {
		case c.life.Err() != nil:
		case errors.Is(err, errFallback):
			log.Info("cache falls back to one-shot watches", "path", c.path, "server", c.wire.Servers[k])
			c.oneShot.Store(true)
		default:
			log.Info("cache connection lost", "path", c.path, "err", err)
			c.setStale()
			b.Wait(c.life)
		}
	}
	c.fail(context.Cause(c.life))
}

// serve runs one connection's engine until the connection breaks, and
// reports whether the connection served a snapshot.
func (c *Cache) serve(w *wire, lost bool) (served bool, err error) {
	stop := context.AfterFunc(c.life, w.closeSession)
	defer stop()
	e := newEngine(c, w, c.oneShot.Load())
	c.mu.Lock()
	c.eng = e
	c.sess = session{id: w.sess.id, passwd: w.sess.passwd}
	if lost {
		c.gen++
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.eng = nil
		c.mu.Unlock()
		e.mu.Lock()
		served = e.published
		e.mu.Unlock()
	}()
	e.start()
	for {
		b, err := w.readFrame()
		if err != nil {
			return false, e.readFailed(err)
		}
		if err := e.frame(b); err != nil {
			return false, err
		}
	}
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

// under reports whether a server path lies in the cache's subtree.
func (c *Cache) under(p string) bool {
	return p == c.root || c.root == "/" || strings.HasPrefix(p, c.root+"/")
}

// depth is how many levels a server path in the subtree lies below the
// root.
func (c *Cache) depth(p string) int {
	if p == c.root {
		return 0
	}
	rest := p[len(c.root):]
	if c.root == "/" {
		rest = p
	}
	return strings.Count(rest, "/")
}

// rel turns a server path into the caller's.
func (c *Cache) rel(p string) string {
	switch {
	case c.ns == "":
		return p
	case p == c.ns:
		return "/"
	}
	return p[len(c.ns):]
}

func stat(s jute.Stat) client.Stat {
	return client.Stat{Czxid: s.Czxid, Mzxid: s.Mzxid, Ctime: s.Ctime, Mtime: s.Mtime, Version: s.Version,
		Cversion: s.Cversion, Aversion: s.Aversion, EphemeralOwner: s.EphemeralOwner, DataLength: s.DataLength,
		NumChildren: s.NumChildren, Pzxid: s.Pzxid}
}
