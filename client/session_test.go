package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A server restart shorter than the session timeout keeps the session and
// its ephemeral nodes, and subscribers see Suspended then Reconnected.
func TestServerRestartKeepsSession(t *testing.T) {
	t.Parallel()
	zk := zktest.StartZooKeeper(t)
	c := connect(t, zk.Servers(), client.WithSessionTimeout(zktest.Scale(20*time.Second)))
	ctx := testCtx(t)
	sess := c.Session()
	node, err := c.Create(ctx, "/restart-eph", []byte("x"), client.Ephemeral)
	require.NoError(t, err)
	sub := c.Subscribe()
	defer sub.Close()

	zk.Kill(0)
	zk.Restart(0)

	assert.Equal(t, client.StateSuspended, nextState(t, sub, 30*time.Second).State)
	ev := nextState(t, sub, 30*time.Second)
	require.Equal(t, client.StateReconnected, ev.State)
	assert.Same(t, sess, ev.Session)
	assert.Same(t, sess, c.Session())
	assert.True(t, sess.Alive())

	ok, st, err := c.Exists(ctx, node)
	require.NoError(t, err)
	require.True(t, ok, "ephemeral survived the restart")
	assert.Equal(t, sess.ID(), st.EphemeralOwner)
}

// A partition longer than the session timeout ends the old Session, the
// server deletes its ephemerals, and the client carries on with a new one.
//
// The client declares the session lost by itself once it has been suspended
// for the negotiated timeout. The server counts the timeout from when it
// last heard from the client and expires the session up to one tick later
// (ZooKeeper's expiry buckets), so the two are close here, where the client
// notices the partition at once; a client that notices it by its read
// timeout (two thirds of the session timeout) declares the loss that much
// after the server. Once the network heals the client has a new session at
// once.
func TestPartitionLongerThanTimeoutLosesSession(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		timeout := zktest.Scale(time.Second)
		p := newProxied(t, b, timeout)
		ctx := testCtx(t)
		old := p.sess

		_, _, watch, err := p.c.ExistsW(ctx, p.base+"/never")
		require.NoError(t, err)
		require.NoError(t, p.c.Sync(ctx, "/")) // the server hears from the client now
		start := time.Now()
		since := p.partition(t)
		changed := p.c.Changed()
		lost := nextState(t, p.sub, 10*time.Second)
		lostAt := time.Now()
		require.Equal(t, client.StateLost, lost.State)
		assert.Same(t, old, lost.Session)
		select {
		case <-changed:
		default:
			t.Fatal("Changed was not closed when the client declared the session lost")
		}
		// The watch ends with the session the client declared lost, while
		// the server has not said so yet (the client cannot reach it).
		select {
		case we := <-watch:
			assert.Equal(t, client.EventNotWatching, we.Type)
			assert.ErrorIs(t, we.Err, client.ErrSessionLost)
		default:
			t.Fatal("a watch of the lost session is still set")
		}
		select {
		case <-old.Done():
		default:
			t.Fatal("old session's Done is open after Lost")
		}
		assert.ErrorIs(t, old.Err(), client.ErrSessionLost)
		assert.ErrorIs(t, old.Context().Err(), context.Canceled)
		assert.GreaterOrEqual(t, lostAt.Sub(since), timeout, "lost before the session timeout passed")
		assert.Less(t, lostAt.Sub(since), timeout+zktest.Scale(time.Second), "loss declared late")

		// The server expires the session on its own clock and deletes the node.
		eventually(t, 20*time.Second, "the server to delete the lost session's ephemeral", func() bool {
			ok, _ := p.nodeExists(t)
			return !ok
		})
		serverExpired := time.Since(start)

		p.proxy.Heal()
		healed := time.Now()
		ev := nextState(t, p.sub, 30*time.Second)
		require.Equal(t, client.StateConnected, ev.State)
		took := time.Since(healed)
		require.NotSame(t, old, ev.Session)
		assert.NotEqual(t, old.ID(), ev.Session.ID())
		assert.Same(t, ev.Session, p.c.Session())
		t.Logf("%s: timeout %v; the client declared the loss %v after its last request, the server by %v; new session %v after the heal",
			b.Name, timeout, lostAt.Sub(start), serverExpired, took)
		assert.Less(t, took, zktest.Scale(500*time.Millisecond), "new session late")
		_, err = p.c.Create(ctx, p.base+"/again", nil, client.Ephemeral)
		require.NoError(t, err, "the client carries on with the new session")
	})
}

// Expiry reported by the server (another connection closed the session)
// ends the Session with ErrSessionExpired as the cause, and the watches
// set under it with an error that says the session was lost.
func TestServerExpiryLosesSession(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		sess := c.Session()
		sub := c.Subscribe()
		defer sub.Close()
		_, _, watch, err := c.ExistsW(ctx, zktest.UniquePath(t))
		require.NoError(t, err)
		require.NoError(t, zktest.ExpireSession(ctx, b.Addr(), sess.ID(), sess.Password()))
		select {
		case we := <-watch:
			assert.Equal(t, client.EventNotWatching, we.Type)
			assert.ErrorIs(t, we.Err, client.ErrSessionLost)
			assert.ErrorIs(t, we.Err, client.ErrSessionExpired)
		case <-time.After(30 * time.Second):
			t.Fatal("the watch did not end with the session")
		}
		for {
			ev := nextState(t, sub, 30*time.Second)
			if ev.State == client.StateLost {
				assert.Same(t, sess, ev.Session)
				break
			}
			// ExpireSession takes the session over on a connection of
			// its own, then closes it: the client, cut off by the
			// takeover, may win the session back in between.
			require.Contains(t, []client.State{client.StateSuspended, client.StateReconnected}, ev.State)
		}
		assert.ErrorIs(t, sess.Err(), client.ErrSessionExpired)
		assert.True(t, client.IsSessionLost(sess.Err()))
		ev := nextState(t, sub, 30*time.Second)
		assert.Equal(t, client.StateConnected, ev.State)
		assert.NotEqual(t, sess.ID(), ev.Session.ID())
	})
}

// Close delivers StateClosed last and ends every subscription.
func TestCloseEndsSubscriptions(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		c, err := client.Connect(ctx, b.Servers)
		require.NoError(t, err)
		sub := c.Subscribe()
		sess := c.Session()
		_, _, watch, err := c.GetW(ctx, "/")
		require.NoError(t, err)
		c.Close()
		select {
		case we := <-watch:
			assert.Equal(t, client.WatchEvent{Type: client.EventNotWatching, Err: client.ErrClosed}, we)
		default:
			t.Fatal("a watch is still set after Close")
		}
		ev := nextState(t, sub, 10*time.Second)
		assert.Equal(t, client.StateClosed, ev.State)
		_, open := <-sub.Events()
		assert.False(t, open, "channel closed after StateClosed")
		assert.ErrorIs(t, sess.Err(), client.ErrClosed)
		_, _, err = c.Get(ctx, "/")
		assert.True(t, client.IsSessionLost(err), "call after Close: %v", err)
	})
}

// A session the client declares lost while a reconnect attempt is in
// flight (the connect request, asking to resume it, already sent; the
// server's answer not yet read) is not resumed either: doc.go promises that
// a session declared lost is never resumed, and that the client asks for a
// new session instead. The proxy's latency holds the answer back across the
// moment the client gives the session up.
func TestLostSessionIsNotResumedByAttemptInFlight(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		timeout := zktest.Scale(2 * time.Second)
		p := newProxied(t, b, timeout)
		require.Equal(t, timeout, p.sess.Timeout())

		since := p.partition(t)
		// Keep the session alive on the server behind the client's back.
		release := holdSession(t, b.Addr(), p.sess)
		// Heal shortly before the client gives the session up, with enough
		// latency that the connect request of the next attempt leaves
		// before that moment and its answer arrives after it (and well
		// within the client's wait for a connect response).
		latency := zktest.Scale(300 * time.Millisecond)
		time.Sleep(time.Until(since.Add(timeout - latency))) // the fault's length, not a wait for a condition
		p.proxy.SetLatency(latency)
		p.proxy.Heal()

		require.Equal(t, client.StateLost, nextState(t, p.sub, 10*time.Second).State)
		release()
		ev := nextState(t, p.sub, 10*time.Second)
		require.Equal(t, client.StateConnected, ev.State)
		assert.NotEqual(t, p.sess.ID(), ev.Session.ID(), "the lost session was resumed")
		p.proxy.SetLatency(0)
		eventually(t, 20*time.Second, "the server to expire the abandoned session", func() bool {
			ok, _ := p.nodeExists(t)
			return !ok
		})
	})
}

// After Close every call fails at once with an error matching ErrClosed,
// AddAuth included.
func TestEveryCallAfterCloseIsErrClosed(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		c, err := client.Connect(ctx, b.Servers)
		require.NoError(t, err)
		c.Close()
		base := zktest.UniquePath(t)
		calls := map[string]func() error{
			"create": func() error { _, err := c.Create(ctx, base, nil, client.Persistent); return err },
			"get":    func() error { _, _, err := c.Get(ctx, "/"); return err },
			"getW":   func() error { _, _, _, err := c.GetW(ctx, "/"); return err },
			"set":    func() error { _, err := c.Set(ctx, "/", nil, -1); return err },
			"delete": func() error { return c.Delete(ctx, base, -1) },
			"exists": func() error { _, _, err := c.Exists(ctx, "/"); return err },
			"children": func() error {
				_, _, err := c.Children(ctx, "/")
				return err
			},
			"sync":       func() error { return c.Sync(ctx, "/") },
			"getACL":     func() error { _, _, err := c.GetACL(ctx, "/"); return err },
			"setACL":     func() error { _, err := c.SetACL(ctx, base, client.OpenACL, -1); return err },
			"addAuth":    func() error { return c.AddAuth(ctx, "digest", []byte("user:password")) },
			"multi":      func() error { _, err := c.Multi(ctx, client.CreateOp(base, nil, client.Persistent)); return err },
			"ensurePath": func() error { return c.EnsurePath(ctx, base) },
			"protected": func() error {
				_, err := c.CreateProtected(ctx, base+"/p-", nil, client.EphemeralSequential)
				return err
			},
			"waitConnected": func() error { _, err := c.WaitConnected(ctx); return err },
			"catchUp":       func() error { return c.CatchUp(ctx, 1) },
			"createStat":    func() error { _, _, err := c.CreateStat(ctx, base, nil, client.Persistent); return err },
			"multiRead":     func() error { _, err := c.MultiRead(ctx, client.GetOp("/")); return err },
			"ephemerals":    func() error { _, err := c.Ephemerals(ctx, ""); return err },
			"allChildrenNumber": func() error {
				_, err := c.AllChildrenNumber(ctx, "/")
				return err
			},
			"getConfig":  func() error { _, _, err := c.GetConfig(ctx); return err },
			"getConfigW": func() error { _, _, _, err := c.GetConfigW(ctx); return err },
			"whoAmI":     func() error { _, err := c.WhoAmI(ctx); return err },
			"watch":      func() error { _, err := c.Watch(ctx, "/", client.Recursive); return err },
			"removeWatches": func() error {
				return c.RemoveWatches(ctx, "/", client.AnyWatches)
			},
		}
		for name, call := range calls {
			start := time.Now()
			err := call()
			assert.ErrorIs(t, err, client.ErrClosed, name)
			assert.False(t, client.IsRetryable(err), "%s: %v", name, err)
			assert.False(t, client.IsTransient(err), "%s: %v", name, err)
			assert.Less(t, time.Since(start), zktest.Scale(time.Second), name)
			assert.NotContains(t, err.Error(), `""`, "%s: a call without a path names none", name)
		}
	})
}

// Go runs a function for as long as the client lives: its context ends
// with Close, Close waits for it to return, and after Close Go runs
// nothing.
func TestGoLivesWithTheClient(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		started, returned := make(chan struct{}), make(chan struct{})
		c.Go(func(ctx context.Context) {
			close(started)
			<-ctx.Done()
			close(returned)
		})
		<-started
		c.Close()
		select {
		case <-returned:
		default:
			t.Fatal("Close returned before the function it runs")
		}

		ran := make(chan struct{})
		c.Go(func(context.Context) { close(ran) })
		select {
		case <-ran:
			t.Fatal("Go ran a function after Close")
		case <-time.After(100 * time.Millisecond):
		}
	})
}
