package client_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// On a new connection the client sends its credentials again before
// anything else, and its calls wait for the server's answer: a read of a
// node only the credentials may read, made the moment the client
// reconnects, is never refused with NoAuth.
func TestDirectCallsWaitForCredentials(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()}, client.WithDigestAuth("alice", "secret"))
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		private, err := c.Create(ctx, base+"/private", []byte("s"), client.Persistent,
			client.WithACL(client.DigestACL(client.PermAll, "alice", "secret")...))
		require.NoError(t, err)
		sub := c.Subscribe()
		t.Cleanup(sub.Close)

		var reads, refused atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // reads as fast as it can, reconnects or not
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _, err := c.Get(ctx, private)
				switch {
				case err == nil:
					reads.Add(1)
				case errors.Is(err, client.ErrNoAuth):
					refused.Add(1)
				}
			}
		}()
		const reconnects = 20
		for range reconnects {
			before := reads.Load()
			proxy.ResetAll()
			require.Equal(t, client.StateSuspended, nextState(t, sub, 10*time.Second).State)
			require.Equal(t, client.StateReconnected, nextState(t, sub, 10*time.Second).State)
			eventually(t, 10*time.Second, "a read on the new connection", func() bool { return reads.Load() > before })
		}
		close(stop)
		wg.Wait()
		require.Zero(t, refused.Load(), "reads refused with NoAuth right after a reconnect (of %d)", reads.Load())
	})
}

// On a new connection of a client with credentials, a call waits for the
// server to answer them, not longer: it goes as soon as they are answered,
// long before the next ping. A call whose context ends while
// it waits was never sent, so even a write's outcome is known.
func TestCallsAfterCredentialsOnReconnect(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		proxy := zktest.NewProxy(t, b.Addr())
		// Pings every 10 s: far later than the answer to the credentials.
		c := connect(t, []string{proxy.Addr()}, client.WithDigestAuth("alice", "secret"),
			client.WithSessionTimeout(zktest.Scale(30*time.Second)))
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		sub := c.Subscribe()
		t.Cleanup(sub.Close)

		latency := zktest.Scale(300 * time.Millisecond)
		proxy.SetLatency(latency)
		proxy.ResetAll()
		require.Equal(t, client.StateSuspended, nextState(t, sub, 10*time.Second).State)
		require.Equal(t, client.StateReconnected, nextState(t, sub, 10*time.Second).State)
		reconnected := time.Now()

		// The credentials' answer is a round trip of 2×latency away.
		short, cancel := context.WithTimeout(ctx, latency/3)
		_, err := c.Create(short, base+"/unsent", nil, client.Persistent)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.False(t, client.IsOutcomeUnknown(err), "a create that waited for the credentials was never sent: %v", err)

		_, _, err = c.Get(ctx, base)
		require.NoError(t, err)
		took := time.Since(reconnected)
		require.Less(t, took, zktest.Scale(3*time.Second), "the first call after the reconnect waited %v", took)
		ok, _, err := c.Exists(ctx, base+"/unsent")
		require.NoError(t, err)
		require.False(t, ok, "the create cut off before it was sent was applied")
	})
}
