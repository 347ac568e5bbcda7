package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A partition of half the session timeout keeps the session and its
// ephemeral node, and the client reconnects as soon as the network heals.
// (go-zookeeper's own host provider pauses a second before every attempt on
// a single server, so with a 2 s timeout it lost this session.)
func TestBlipOfHalfTheTimeoutKeepsSession(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		timeout := zktest.Scale(2 * time.Second)
		p := newProxied(t, b, timeout)
		require.Equal(t, timeout, p.sess.Timeout())

		require.NoError(t, p.c.Sync(testCtx(t), "/")) // the server hears from the client now
		start := time.Now()
		p.partition(t)
		time.Sleep(time.Until(start.Add(timeout / 2))) // the fault's length, not a wait for a condition
		p.proxy.Heal()
		healed := time.Now()

		ev := nextState(t, p.sub, 10*time.Second)
		took := time.Since(healed)
		require.Equal(t, client.StateReconnected, ev.State, "the session outlived a partition of half its timeout")
		assert.Same(t, p.sess, ev.Session)
		assert.True(t, p.sess.Alive())
		assert.Less(t, took, zktest.Scale(500*time.Millisecond), "reconnected %v after the network healed", took)
		t.Logf("%s: reconnected %v after a %v partition healed (session timeout %v)", b.Name, took, timeout/2, timeout)
		ok, st := p.nodeExists(t)
		require.True(t, ok, "the ephemeral node survived")
		assert.Equal(t, p.sess.ID(), st.EphemeralOwner)
	})
}

// When the server ends the session of a connected client, the client learns
// it at once (it reconnects without pausing and is told the session
// expired), and has a new session right after.
//
// Against real ZooKeeper the session is ended by moving it to a second
// connection and closing it there (zktest.ExpireSession); the client may
// win its session back in between (Reconnected, then Lost once the close
// lands), which ExpireSession answers by trying again.
func TestServerExpiryIsSeenPromptly(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers, client.WithSessionTimeout(zktest.Scale(10*time.Second)))
		sess := c.Session()
		sub := c.Subscribe()
		defer sub.Close()

		b.ExpireSession(t, sess)
		expired := time.Now()
		var lost time.Time
		for lost.IsZero() {
			ev := nextState(t, sub, 10*time.Second)
			switch ev.State {
			case client.StateSuspended, client.StateReconnected:
				assert.Same(t, sess, ev.Session)
			case client.StateLost:
				lost = time.Now()
				assert.Same(t, sess, ev.Session)
			default:
				t.Fatalf("unexpected %v before Lost", ev.State)
			}
		}
		assert.ErrorIs(t, sess.Err(), client.ErrSessionExpired)
		ev := nextState(t, sub, 10*time.Second)
		require.Equal(t, client.StateConnected, ev.State)
		renewed := time.Now()
		assert.NotEqual(t, sess.ID(), ev.Session.ID())
		t.Logf("%s: expiry seen %v after the server ended the session; new session %v later",
			b.Name, lost.Sub(expired), renewed.Sub(lost))
		assert.Less(t, lost.Sub(expired), zktest.Scale(500*time.Millisecond), "expiry seen late")
		assert.Less(t, renewed.Sub(lost), zktest.Scale(500*time.Millisecond), "new session late")
	})
}

// A call made while the client is suspended fails at once with a retryable
// error, and is not sent later: it was never queued.
func TestCallWhileSuspendedFailsAtOnce(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		p := newProxied(t, b, zktest.Scale(10*time.Second))
		ctx := testCtx(t)
		path := p.base + "/refused"

		p.partition(t)
		start := time.Now()
		_, err := p.c.Create(ctx, path, nil, client.Persistent)
		took := time.Since(start)
		require.Error(t, err)
		assert.True(t, client.IsRetryable(err), "retryable: %v", err)
		assert.False(t, client.IsOutcomeUnknown(err), "never sent, so not unknown: %v", err)
		assert.ErrorIs(t, err, client.ErrNoServer)
		assert.Less(t, took, zktest.Scale(100*time.Millisecond))
		assert.True(t, client.IsTransient(err), "transient: %v", err)
		_, _, err = p.c.Get(ctx, "/")
		assert.True(t, client.IsRetryable(err), "retryable: %v", err)
		// The ACL calls too.
		start = time.Now()
		_, err = p.c.SetACL(ctx, p.base, client.OpenACL, -1)
		assert.Less(t, time.Since(start), zktest.Scale(100*time.Millisecond))
		assert.True(t, client.IsRetryable(err), "retryable: %v", err)
		assert.False(t, client.IsOutcomeUnknown(err), "never sent, so not unknown: %v", err)
		start = time.Now()
		_, _, err = p.c.GetACL(ctx, p.base)
		assert.Less(t, time.Since(start), zktest.Scale(100*time.Millisecond))
		assert.True(t, client.IsRetryable(err), "retryable: %v", err)

		p.proxy.Heal()
		require.Equal(t, client.StateReconnected, nextState(t, p.sub, 10*time.Second).State)
		require.NoError(t, p.c.Sync(ctx, "/"))
		ok, _, err := p.observer.Exists(ctx, path)
		require.NoError(t, err)
		assert.False(t, ok, "the refused create was applied after the reconnect")
	})
}

// A session the client declared lost stays lost, even if the server still
// has it when the client reconnects (after a quorum loss or a restart the
// servers revive sessions with fresh timeouts): the client opens a new
// session, and the server expires the old one with its ephemeral nodes.
// Otherwise those nodes, whose holders were told they are gone, would live
// for as long as the client (a lock nobody holds and nobody can take).
func TestLostSessionIsNotResumed(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		p := newProxied(t, b, zktest.Scale(time.Second))

		p.partition(t)
		// Keep the session alive on the server behind the client's back.
		release := holdSession(t, b.Addr(), p.sess)
		require.Equal(t, client.StateLost, nextState(t, p.sub, 10*time.Second).State)
		release() // the server keeps the session for one more timeout
		p.proxy.Heal()

		ev := nextState(t, p.sub, 10*time.Second)
		require.Equal(t, client.StateConnected, ev.State)
		assert.NotEqual(t, p.sess.ID(), ev.Session.ID(), "the lost session was resumed")
		eventually(t, 20*time.Second, "the server to expire the abandoned session", func() bool {
			ok, _ := p.nodeExists(t)
			return !ok
		})
	})
}

// Each suspension has the whole session timeout to end in: a reconnect
// stops the clock of the suspension it ends, so a second suspension that
// starts soon after is not cut short by the first one's timer.
func TestSuspensionAfterReconnectHasItsOwnTimeout(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		timeout := zktest.Scale(3 * time.Second)
		p := newProxied(t, b, timeout)
		ctx := testCtx(t)

		first := p.partition(t)
		p.proxy.Heal()
		require.Equal(t, client.StateReconnected, nextState(t, p.sub, 10*time.Second).State)
		require.NoError(t, p.c.Sync(ctx, "/"))              // the server hears from the client now
		time.Sleep(time.Until(first.Add(timeout * 6 / 10))) // the gap between the faults, not a wait for a condition
		second := p.partition(t)
		// The first suspension's timer would have ended the session at
		// first+timeout, 0.4 timeouts into this one; the server keeps it
		// for a whole timeout after it last heard from the client. Healed
		// at 0.55 timeouts, the client has 0.45 of one to reconnect in, on
		// a machine that may be busy.
		time.Sleep(time.Until(second.Add(timeout * 55 / 100))) // the fault's length
		p.proxy.Heal()

		ev := nextState(t, p.sub, 10*time.Second)
		require.Equal(t, client.StateReconnected, ev.State, "the session was declared lost before its suspension lasted its timeout")
		assert.Same(t, p.sess, ev.Session)
		assert.True(t, p.sess.Alive())
		ok, st := p.nodeExists(t)
		require.True(t, ok, "the ephemeral node survived")
		assert.Equal(t, p.sess.ID(), st.EphemeralOwner)
	})
}
