package configwatch

import (
	"context"
	"errors"
	"sync"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
)

// Snapshot is one complete configuration.
type Snapshot[T any] struct {
	Value T
	// Zxid is the transaction id of the publish the snapshot reflects (the
	// ready node's mzxid): every reader of that publish sees the same one,
	// and a later publish has a higher one.
	Zxid int64
	// Err is the Decoder's error for a configuration it could not decode;
	// Value is then the zero T. Watch delivers such a snapshot instead of
	// stopping, so that the next publish can repair it.
	Err error
}

// Get reads the current configuration and decodes it. While a publish is
// in progress (ready is missing) it waits for that publish to complete.
// It rides out lost connections and sessions (it reads again under the
// next one), for as long as ctx lives.
//
// Errors name the path, once: ErrNoConfig when the configuration node
// does not exist; the decoder's error, also in the snapshot's Err; an
// *client.InputError for an invalid path or a nil decoder, before anything
// is sent; an error matching recipes.ErrOtherRecipe when the path holds
// another recipe's nodes (see the package documentation), instead of
// waiting for a publish that will not come; an error matching
// client.ErrClosed once the client is closed; ctx's error; or the
// server's (client.ErrNoAuth, ...).
func (k *Config[T]) Get(ctx context.Context) (Snapshot[T], error) {
	const op = "config get"
	if err := k.checkRead(op); err != nil {
		return Snapshot[T]{}, err
	}
	var snap Snapshot[T]
	err := k.c.Retry(ctx, func(ctx context.Context) error {
		for {
			vals, zxid, _, err := read(ctx, k.c, k.path, false)
			if err != nil {
				return err
			}
			if vals != nil {
				snap = k.snapshot(op, vals, zxid)
				return nil
			}
			// Waiting for a publish: make sure there is a configuration
			// to wait for, not another recipe's directory.
			if err := checkDir(ctx, k.c, k.path); err != nil {
				return err
			}
			if err := awaitPublish(ctx, k.c, k.path); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return Snapshot[T]{}, recipes.Wrap(op, k.path, err)
	}
	return snap, snap.Err
}

// awaitPublish waits until ready exists (a publish completed), or returns
// ErrNoConfig when the configuration node does not exist.
func awaitPublish(ctx context.Context, c *client.Client, path string) error {
	ok, _, ready, err := c.ExistsW(ctx, client.JoinPath(path, readyName))
	if err != nil || ok {
		return err
	}
	if ok, _, err := c.Exists(ctx, path); err != nil || !ok {
		if err == nil {
			err = ErrNoConfig
		}
		return err
	}
	return waitReady(ctx, ready)
}

// Watch follows the configuration and delivers each complete snapshot on
// the feed's Values channel until ctx ends. Snapshots are never mixed: a
// publish in progress is not seen until it completes, and meanwhile the
// last complete snapshot read stays the one to deliver (a receiver that
// has not taken it yet gets it without waiting for that publish). The
// feed is level-triggered (recipes.Follow): it reads again after every
// reconnect and under every new session, so it rides out lost connections
// and sessions, and a slow receiver skips snapshots but always ends up
// with the current one. A snapshot that does not decode is delivered with
// Err set, and the feed goes on.
//
// The feed stops (Values closes, Err says why) when ctx ends (ctx's
// error), when the client is closed (an error matching client.ErrClosed),
// or on an error retrying cannot cure, which names the path once: an
// *client.InputError for an invalid path or a nil decoder (nothing is
// sent), no permission to read (client.ErrNoAuth), another recipe's
// nodes at the path (recipes.ErrOtherRecipe).
func (k *Config[T]) Watch(ctx context.Context) *recipes.Feed[Snapshot[T]] {
	const op = "config watch"
	bad := k.checkRead(op)
	var (
		last    Snapshot[T] // the last snapshot read (next runs on one goroutine)
		hasLast bool
	)
	next := func(ctx context.Context) (Snapshot[T], <-chan client.WatchEvent, error) {
		if bad != nil {
			return Snapshot[T]{}, nil, bad
		}
		for {
			vals, zxid, ready, err := read(ctx, k.c, k.path, true)
			if err != nil {
				return Snapshot[T]{}, nil, recipes.Wrap(op, k.path, err)
			}
			if vals != nil {
				last, hasLast = k.snapshot(op, vals, zxid), true
				return last, ready, nil
			}
			if hasLast {
				// A publish is in progress: the last snapshot read is
				// still the current configuration. Offer it again (Follow
				// does not send it twice) and wait for ready in Follow,
				// which meanwhile delivers it to a receiver that has not
				// taken it yet.
				return last, ready, nil
			}
			// Not ready: there is nothing complete to deliver yet. Make
			// sure there is a configuration to wait for, not another
			// recipe's directory (a last snapshot read proved that).
			if err := checkDir(ctx, k.c, k.path); err != nil {
				return Snapshot[T]{}, nil, recipes.Wrap(op, k.path, err)
			}
			if err := waitReady(ctx, ready); err != nil {
				return Snapshot[T]{}, nil, recipes.Wrap(op, k.path, err)
			}
		}
	}
	return recipes.Follow(ctx, k.c, next, func(a, b Snapshot[T]) bool { return a.Zxid == b.Zxid })
}

// snapshot decodes the values of the publish at zxid. Values that do not
// decode make a snapshot with Err set and the zero Value, whatever the
// decoder returned with its error (json.Unmarshal fills what it can).
func (k *Config[T]) snapshot(op string, vals Values, zxid int64) Snapshot[T] {
	v, err := k.decode(vals)
	if err != nil {
		return Snapshot[T]{Zxid: zxid, Err: recipes.Wrap(op, k.path, err)}
	}
	return Snapshot[T]{Value: v, Zxid: zxid}
}

// read reads one complete snapshot of the configuration at path: its
// values (nil while ready is missing), the zxid it reflects, and with
// watch set a watch on ready that fires at the next publish (or at
// ready's creation).
//
// ready is checked before and after the keys are read; if it was deleted
// and created again (a new czxid) or set (a new version) in between, a
// publish overlapped the read, and it starts over. See the package
// documentation for why an unchanged ready proves the keys consistent.
func read(ctx context.Context, c *client.Client, path string, watch bool) (Values, int64, <-chan client.WatchEvent, error) {
	readyPath := client.JoinPath(path, readyName)
	for {
		var (
			ok     bool
			before *client.Stat
			ready  <-chan client.WatchEvent
			err    error
		)
		if watch {
			ok, before, ready, err = c.ExistsW(ctx, readyPath)
		} else {
			ok, before, err = c.Exists(ctx, readyPath)
		}
		if err != nil || !ok {
			return nil, 0, ready, err
		}
		if err := checkKeyNode(path, readyName, before); err != nil {
			return nil, 0, nil, err
		}
		children, _, err := c.Children(ctx, path)
		if errors.Is(err, client.ErrNoNode) {
			continue // deleted with ready: look again
		}
		if err != nil {
			return nil, 0, nil, err
		}
		vals, err := getAll(ctx, c, path, children)
		if errors.Is(err, client.ErrNoNode) {
			continue // a key went: a publish overlapped
		}
		if err != nil {
			return nil, 0, nil, err
		}
		ok, after, err := c.Exists(ctx, readyPath)
		if err != nil {
			return nil, 0, nil, err
		}
		if ok && after.Czxid == before.Czxid && after.Version == before.Version {
			return vals, before.Mzxid, ready, nil
		}
	}
}

// checkDir checks the children of the configuration node path
// (checkKeys); a missing node is no matter.
func checkDir(ctx context.Context, c *client.Client, path string) error {
	children, _, err := c.Children(ctx, path)
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkKeys(ctx, c, path, children)
}

// maxReads bounds the reads of one snapshot in flight at once.
const maxReads = 32

// getAll reads every key among children (all but ready), in parallel:
// one round trip for a small configuration. A child that is no key (see
// checkKeyNode) is an error matching recipes.ErrOtherRecipe.
func getAll(ctx context.Context, c *client.Client, path string, children []string) (Values, error) {
	var (
		mu   sync.Mutex
		vals = make(Values, len(children))
	)
	err := eachChild(children, func(key string) error {
		if key == readyName {
			return nil
		}
		node := client.JoinPath(path, key)
		data, st, err := c.Get(ctx, node)
		if err == nil {
			err = checkKeyNode(path, key, st)
		}
		if data == nil {
			data = []byte{}
		}
		mu.Lock()
		defer mu.Unlock()
		vals[key] = data
		return err
	})
	return vals, err
}

// checkKeys checks, in parallel, that every child of path among children
// is a key of a configuration or its ready flag (checkKeyNode). A child
// deleted meanwhile is no matter.
func checkKeys(ctx context.Context, c *client.Client, path string, children []string) error {
	return eachChild(children, func(key string) error {
		node := client.JoinPath(path, key)
		ok, st, err := c.Exists(ctx, node)
		if err != nil || !ok {
			return err
		}
		return checkKeyNode(path, key, st)
	})
}

// checkKeyNode refuses key, a child of the configuration at path (a key,
// or ready) whose Stat st shows it is no configuration's: one that is
// ephemeral or has children is another recipe's (a lock's or a member's
// node, a semaphore's directory; layout.Configwatch), and writing,
// deleting or reading it as a key would break that recipe or mix its
// nodes into the configuration.
func checkKeyNode(path, key string, st *client.Stat) error {
	return layout.Configwatch.Check(layout.Sighting{Path: path, Children: []layout.Child{{Name: key, Stat: st}}})
}

// eachChild calls fn for every name among children, maxReads at a time,
// and returns the first error.
func eachChild(children []string, fn func(name string) error) error {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		slots = make(chan struct{}, maxReads)
	)
	for _, name := range children {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			err := fn(name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
		})
	}
	wg.Wait()
	return first
}

// waitReady waits for the watch on ready to fire. A watch dropped with the
// session is a transient error: the caller reads again under the next.
func waitReady(ctx context.Context, ready <-chan client.WatchEvent) error {
	select {
	case ev := <-ready:
		if ev.Type == client.EventNotWatching {
			return ev.Err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
