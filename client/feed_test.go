package client_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// nextEvent reads the feed's next event, failing the test when none comes
// in time or the feed ends.
func nextEvent(t *testing.T, f *client.WatchFeed) client.WatchEvent {
	t.Helper()
	select {
	case ev, ok := <-f.Events():
		require.True(t, ok, "the feed ended: %v", f.Err())
		return ev
	case <-time.After(zktest.Scale(10 * time.Second)):
		t.Fatalf("no event on %s's feed", f.Path())
		return client.WatchEvent{}
	}
}

// expectEvents reads the feed's next events and compares them with want.
func expectEvents(t *testing.T, f *client.WatchFeed, want ...client.WatchEvent) {
	t.Helper()
	for _, w := range want {
		require.Equal(t, w, nextEvent(t, f))
	}
}

// ended waits for the feed to end and returns its Err.
func ended(t *testing.T, f *client.WatchFeed) error {
	t.Helper()
	deadline := time.After(zktest.Scale(10 * time.Second))
	for {
		select {
		case _, ok := <-f.Events():
			if !ok {
				return f.Err()
			}
		case <-deadline:
			t.Fatalf("%s's feed did not end", f.Path())
		}
	}
}

func ev(typ client.EventType, path string) client.WatchEvent {
	return client.WatchEvent{Type: typ, Path: path}
}

// A non-recursive feed reports its node's own changes, its children's
// comings and goings included, and nothing of its children's data; a
// recursive one reports every node below it, and no children's changes.
// Inside a namespace, paths are the client's.
func TestWatchFeedEvents(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ns := zktest.UniquePath(t)
		c := connect(t, b.Servers, client.WithNamespace(ns))
		ctx := testCtx(t)

		node, err := c.Watch(ctx, "/n", client.NonRecursive)
		require.NoError(t, err)
		defer node.Close()
		tree, err := c.Watch(ctx, "/r", client.Recursive)
		require.NoError(t, err)
		defer tree.Close()

		for _, p := range []string{"/n", "/n/c", "/r", "/r/c", "/r/c/d"} {
			_, err := c.Create(ctx, p, nil, client.Persistent)
			require.NoError(t, err)
		}
		for _, p := range []string{"/n/c", "/n", "/r/c/d"} {
			_, err := c.Set(ctx, p, []byte("x"), -1)
			require.NoError(t, err)
		}
		for _, p := range []string{"/n/c", "/n", "/r/c/d"} {
			require.NoError(t, c.Delete(ctx, p, -1))
		}
		expectEvents(t, node, ev(client.EventNodeCreated, "/n"), ev(client.EventNodeChildrenChanged, "/n"),
			ev(client.EventNodeDataChanged, "/n"), ev(client.EventNodeChildrenChanged, "/n"), ev(client.EventNodeDeleted, "/n"))
		expectEvents(t, tree, ev(client.EventNodeCreated, "/r"), ev(client.EventNodeCreated, "/r/c"),
			ev(client.EventNodeCreated, "/r/c/d"), ev(client.EventNodeDataChanged, "/r/c/d"), ev(client.EventNodeDeleted, "/r/c/d"))
		assert.Empty(t, node.Events(), "nothing more")
		assert.Empty(t, tree.Events(), "nothing more")
		assert.NoError(t, node.Err())
	})
}

// An event is in the feed before the reply to any call the server answered
// after it reaches its caller: a reader that read a node has, in its
// feed, every change of the node up to that read.
func TestWatchFeedEventBeforeLaterReply(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		w := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		f, err := c.Watch(ctx, base, client.NonRecursive)
		require.NoError(t, err)
		defer f.Close()
		for i := range 50 {
			_, err := w.Set(ctx, base, fmt.Appendf(nil, "%d", i), -1)
			require.NoError(t, err)
			require.NoError(t, c.Sync(ctx, base))
			data, _, err := c.Get(ctx, base)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint(i), string(data))
			require.Len(t, f.Events(), 1, "write %d: the event is in the feed once the read shows the write", i)
			require.Equal(t, ev(client.EventNodeDataChanged, base), <-f.Events())
		}
	})
}

// After a reconnect the feed says EventResync (what changed meanwhile is
// not replayed), and goes on with the changes after it: the watch was set
// again on the new connection.
func TestWatchFeedResyncAfterReconnect(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		p := newProxied(t, b, zktest.Scale(10*time.Second))
		ctx := testCtx(t)
		f, err := p.c.Watch(ctx, p.base, client.Recursive)
		require.NoError(t, err)
		defer f.Close()

		p.partition(t)
		_, err = p.observer.Create(ctx, p.base+"/while-away", nil, client.Persistent)
		require.NoError(t, err)
		p.proxy.Heal()
		require.Equal(t, client.StateReconnected, nextState(t, p.sub, 10*time.Second).State)
		expectEvents(t, f, ev(client.EventResync, p.base))
		// The reader reads again, on the new connection: behind the
		// watch set again, which the server has then set.
		kids, _, err := p.c.Children(ctx, p.base)
		require.NoError(t, err)
		assert.Contains(t, kids, "while-away")
		_, err = p.observer.Create(ctx, p.base+"/after", nil, client.Persistent)
		require.NoError(t, err)
		expectEvents(t, f, ev(client.EventNodeCreated, p.base+"/after"))
		assert.NoError(t, f.Err())
	})
}

// A feed ends with its session: Err matches ErrSessionLost (and, for a
// server's expiry, ErrSessionExpired); with the client, ErrClosed.
func TestWatchFeedEndsWithSessionAndClient(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		f, err := c.Watch(ctx, base, client.Recursive)
		require.NoError(t, err)
		b.ExpireSession(t, c.Session())
		err = ended(t, f)
		assert.ErrorIs(t, err, client.ErrSessionLost)
		assert.ErrorIs(t, err, client.ErrSessionExpired)

		_, err = c.WaitConnected(ctx)
		require.NoError(t, err)
		g, err := c.Watch(ctx, base, client.NonRecursive)
		require.NoError(t, err, "a feed under the next session")
		c.Close()
		assert.ErrorIs(t, ended(t, g), client.ErrClosed)
		_, err = c.Watch(ctx, base, client.NonRecursive)
		assert.ErrorIs(t, err, client.ErrClosed)
	})
}

// A reader that falls further behind than its buffer ends its feed with
// ErrWatchOverflow, after the events the buffer held: the client does not
// hold events without bound. The server's watch is removed.
func TestWatchFeedOverflow(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		f, err := c.Watch(ctx, base, client.NonRecursive, client.WithWatchBuffer(2))
		require.NoError(t, err)
		for i := range 3 {
			_, err := c.Set(ctx, base, fmt.Appendf(nil, "%d", i), -1)
			require.NoError(t, err)
		}
		expectEvents(t, f, ev(client.EventNodeDataChanged, base), ev(client.EventNodeDataChanged, base))
		err = ended(t, f)
		assert.ErrorIs(t, err, client.ErrWatchOverflow)
		assert.Contains(t, err.Error(), "2 events")
		eventually(t, 10*time.Second, "the server's watch removed", func() bool {
			return !watchedBy(t, b.Addr(), c.Session().ID())[base]
		})
	})
}

// Close ends a feed (Err stays nil); the server's watch is removed once no
// feed needs it, and kept while one does.
func TestWatchFeedClose(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		f1, err := c.Watch(ctx, base, client.NonRecursive)
		require.NoError(t, err)
		f2, err := c.Watch(ctx, base, client.NonRecursive)
		require.NoError(t, err)
		id := c.Session().ID()
		require.True(t, watchedBy(t, b.Addr(), id)[base])

		f1.Close()
		_, open := <-f1.Events()
		assert.False(t, open)
		assert.NoError(t, f1.Err())
		_, err = c.Set(ctx, base, []byte("x"), -1)
		require.NoError(t, err)
		expectEvents(t, f2, ev(client.EventNodeDataChanged, base))
		assert.True(t, watchedBy(t, b.Addr(), id)[base], "the other feed keeps the watch")

		f2.Close()
		eventually(t, 10*time.Second, "the server's watch removed", func() bool {
			return !watchedBy(t, b.Addr(), id)[base]
		})
	})
}

// ZooKeeper 3.8 keeps one watch per path and connection in each table, and
// the last call that set it decides its kind: a GetW, ExistsW or ChildrenW
// on the path of a persistent watch would make it one-shot, and a
// persistent watch on the path of a recursive one would make it not
// recursive. The client keeps them apart: the one-shot watches fire once,
// and the feeds go on, on both servers.
func TestOneShotWatchesBesidePersistent(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		w := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		n := base + "/n"
		require.NoError(t, w.EnsurePath(ctx, n))

		node, err := c.Watch(ctx, n, client.NonRecursive)
		require.NoError(t, err)
		defer node.Close()
		tree, err := c.Watch(ctx, base, client.Recursive)
		require.NoError(t, err)
		defer tree.Close()
		_, _, data, err := c.GetW(ctx, n)
		require.NoError(t, err)
		_, _, exists, err := c.ExistsW(ctx, base)
		require.NoError(t, err)
		_, _, kids, err := c.ChildrenW(ctx, n)
		require.NoError(t, err)
		_, _, baseKids, err := c.ChildrenW(ctx, base)
		require.NoError(t, err)
		// A persistent watch on the recursive one's path: still recursive.
		same, err := c.Watch(ctx, base, client.NonRecursive)
		require.NoError(t, err)
		defer same.Close()

		for i := range 2 {
			_, err := w.Set(ctx, n, fmt.Appendf(nil, "%d", i), -1)
			require.NoError(t, err)
			_, err = w.Set(ctx, base, fmt.Appendf(nil, "%d", i), -1)
			require.NoError(t, err)
			_, err = w.Create(ctx, fmt.Sprintf("%s/c%d", n, i), nil, client.Persistent)
			require.NoError(t, err)
		}
		expectEvents(t, node,
			ev(client.EventNodeDataChanged, n), ev(client.EventNodeChildrenChanged, n),
			ev(client.EventNodeDataChanged, n), ev(client.EventNodeChildrenChanged, n))
		expectEvents(t, tree,
			ev(client.EventNodeDataChanged, n), ev(client.EventNodeDataChanged, base), ev(client.EventNodeCreated, n+"/c0"),
			ev(client.EventNodeDataChanged, n), ev(client.EventNodeDataChanged, base), ev(client.EventNodeCreated, n+"/c1"))
		expectEvents(t, same, ev(client.EventNodeDataChanged, base), ev(client.EventNodeDataChanged, base))
		assert.Equal(t, ev(client.EventNodeDataChanged, n), fired(t, data))
		assert.Equal(t, ev(client.EventNodeDataChanged, base), fired(t, exists))
		assert.Equal(t, ev(client.EventNodeChildrenChanged, n), fired(t, kids))
		// Created nodes below base are not base's children.
		select {
		case e := <-baseKids:
			t.Fatalf("base's child watch fired: %v", e)
		default:
		}
		_, err = w.Create(ctx, base+"/m", nil, client.Persistent)
		require.NoError(t, err)
		assert.Equal(t, ev(client.EventNodeChildrenChanged, base), fired(t, baseKids))
		expectEvents(t, same, ev(client.EventNodeChildrenChanged, base))
		expectEvents(t, tree, ev(client.EventNodeCreated, base+"/m"))
	})
}

// RemoveWatches removes the client's watches of one type on a path: the
// one-shot watches and the feeds it takes end with ErrWatchRemoved, the
// others stay; the server says when there is nothing to remove.
func TestRemoveWatches(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		w := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		n := base + "/n"
		require.NoError(t, w.EnsurePath(ctx, n))

		node, err := c.Watch(ctx, n, client.NonRecursive)
		require.NoError(t, err)
		tree, err := c.Watch(ctx, base, client.Recursive)
		require.NoError(t, err)
		defer tree.Close()
		_, _, data, err := c.GetW(ctx, n)
		require.NoError(t, err)
		_, _, kids, err := c.ChildrenW(ctx, n)
		require.NoError(t, err)

		require.NoError(t, c.RemoveWatches(ctx, n, client.ChildWatches))
		e := fired(t, kids)
		assert.Equal(t, client.EventNotWatching, e.Type)
		assert.ErrorIs(t, e.Err, client.ErrWatchRemoved)
		assert.ErrorIs(t, ended(t, node), client.ErrWatchRemoved)

		_, err = w.Set(ctx, n, []byte("x"), -1)
		require.NoError(t, err)
		assert.Equal(t, ev(client.EventNodeDataChanged, n), fired(t, data), "the data watch stays")
		expectEvents(t, tree, ev(client.EventNodeDataChanged, n))

		// A recursive feed's children half reports nothing of its own.
		require.NoError(t, c.RemoveWatches(ctx, base, client.ChildWatches))
		_, err = w.Create(ctx, n+"/c", nil, client.Persistent)
		require.NoError(t, err)
		expectEvents(t, tree, ev(client.EventNodeCreated, n+"/c"))

		require.NoError(t, c.RemoveWatches(ctx, base, client.AnyWatches))
		assert.ErrorIs(t, ended(t, tree), client.ErrWatchRemoved)
		err = c.RemoveWatches(ctx, base, client.AnyWatches)
		assert.ErrorIs(t, err, client.ErrNoWatcher)
		assert.False(t, watchedBy(t, b.Addr(), c.Session().ID())[base])
	})
}

// Bad input to Watch and RemoveWatches is refused before anything is sent.
func TestWatchBadInput(t *testing.T) {
	t.Parallel()
	refusedBeforeSending(t, func(ctx context.Context, c *client.Client) map[string]func() error {
		return map[string]func() error{
			"relative path": func() error { _, err := c.Watch(ctx, "a", client.Recursive); return err },
			"mode":          func() error { _, err := c.Watch(ctx, "/a", client.WatchMode(7)); return err },
			"buffer": func() error {
				_, err := c.Watch(ctx, "/a", client.Recursive, client.WithWatchBuffer(0))
				return err
			},
			"remove path": func() error { return c.RemoveWatches(ctx, "/a/", client.AnyWatches) },
			"remove type": func() error { return c.RemoveWatches(ctx, "/a", client.WatchType(0)) },
		}
	})
}

// A Watch cut off by its connection's loss fails with a retryable error and
// leaves no feed behind: made again, it gets each event once.
func TestWatchConnectionLossMidCall(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		p := newProxied(t, b, zktest.Scale(10*time.Second))
		ctx := testCtx(t)
		p.proxy.CutAfterNextRequest()
		_, err := p.c.Watch(ctx, p.base, client.NonRecursive)
		require.Error(t, err)
		assert.True(t, client.IsRetryable(err), "%v", err)
		assert.False(t, client.IsOutcomeUnknown(err))

		var f *client.WatchFeed
		eventually(t, 10*time.Second, "Watch after the reconnect", func() bool {
			f, err = p.c.Watch(ctx, p.base, client.NonRecursive)
			return err == nil
		})
		defer f.Close()
		_, err = p.observer.Set(ctx, p.base, []byte("x"), -1)
		require.NoError(t, err)
		expectEvents(t, f, ev(client.EventNodeDataChanged, p.base))
		_, err = p.observer.Set(ctx, p.base, []byte("y"), -1)
		require.NoError(t, err)
		expectEvents(t, f, ev(client.EventNodeDataChanged, p.base))
		assert.Empty(t, f.Events())
	})
}
