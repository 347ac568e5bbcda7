package client_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// WaitConnected returns at once on a connected client, waits across a
// session loss for the next session, waits out a suspension, and fails
// with ErrClosed on a closed client.
func TestWaitConnected(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()}, client.WithSessionTimeout(zktest.Scale(20*time.Second)))
		s, err := c.WaitConnected(ctx)
		require.NoError(t, err)
		require.Same(t, c.Session(), s)

		// Suspended: waits until the connection is back, same session.
		proxy.Blackhole()
		proxy.ResetAll()
		eventually(t, 20*time.Second, "suspended", func() bool { s, _ := c.Suspended(); return s })
		got := make(chan *client.Session, 1)
		go func() {
			s, err := c.WaitConnected(ctx)
			assert.NoError(t, err)
			got <- s
		}()
		select {
		case <-got:
			t.Fatal("WaitConnected returned while suspended")
		case <-time.After(50 * time.Millisecond):
		}
		proxy.Heal()
		select {
		case s2 := <-got:
			require.Same(t, s, s2, "same session after the reconnect")
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("WaitConnected did not return after the reconnect")
		}

		// Lost: the next session.
		b.ExpireSession(t, s)
		select {
		case <-s.Done():
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("the session did not end")
		}
		s3, err := c.WaitConnected(ctx)
		require.NoError(t, err)
		require.NotEqual(t, s.ID(), s3.ID())
		require.True(t, s3.Alive())

		// Cancelled.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		proxy.Blackhole()
		proxy.ResetAll()
		eventually(t, 20*time.Second, "suspended", func() bool { s, _ := c.Suspended(); return s })
		_, err = c.WaitConnected(cctx)
		require.ErrorIs(t, err, context.Canceled)
		proxy.Heal()

		c.Close()
		_, err = c.WaitConnected(ctx)
		require.ErrorIs(t, err, client.ErrClosed)
	})
}

// Retry rides out a lost connection for a read, gives up at once on an
// error that retrying cannot cure, and never retries a write whose outcome
// is unknown.
func TestRetry(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()}, client.WithSessionTimeout(zktest.Scale(20*time.Second)))
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))

		proxy.ResetAll() // the next call finds the client disconnected
		calls := 0
		err := c.Retry(ctx, func(ctx context.Context) error {
			calls++
			_, _, err := c.Get(ctx, base)
			return err
		})
		require.NoError(t, err)
		t.Logf("read after a reset: %d calls", calls)

		calls = 0
		err = c.Retry(ctx, func(ctx context.Context) error {
			calls++
			_, _, err := c.Get(ctx, base+"/missing")
			return err
		})
		require.ErrorIs(t, err, client.ErrNoNode)
		require.Equal(t, 1, calls, "a missing node is an answer, not a reason to retry")

		calls = 0
		proxy.CutAfterNextRequest()
		err = c.Retry(ctx, func(ctx context.Context) error {
			calls++
			_, err := c.Create(ctx, base+"/once", nil, client.PersistentSequential)
			return err
		})
		require.True(t, client.IsOutcomeUnknown(err), "%v", err)
		require.Equal(t, 1, calls, "a write whose outcome is unknown is not retried")

		c.Close()
		err = c.Retry(ctx, func(ctx context.Context) error { _, _, err := c.Get(ctx, base); return err })
		require.ErrorIs(t, err, client.ErrClosed)
	})
}

// A context that ended before the call leaves the client's hands: nothing
// is sent, and the error is the context's, not "outcome unknown", even for
// a write.
func TestCancelledBeforeSend(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()})
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(testCtx(t), base))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		before := proxy.Requests()
		_, err := c.Create(ctx, base+"/x", nil, client.Persistent)
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, client.IsOutcomeUnknown(err), "nothing was sent, yet: %v", err)
		require.Contains(t, err.Error(), base+"/x", "the error names the path")
		_, err = c.Multi(ctx, client.CreateOp(base+"/y", nil, client.Persistent))
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, client.IsOutcomeUnknown(err), "%v", err)
		err = c.Delete(ctx, base, -1)
		require.False(t, client.IsOutcomeUnknown(err), "%v", err)
		_, err = c.SetACL(ctx, base, client.OpenACL, -1)
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, client.IsOutcomeUnknown(err), "%v", err)
		require.Equal(t, before, proxy.Requests(), "requests sent")
	})
}

// Two creates that each fit but together exceed the server's request limit
// are refused before anything is sent, as one oversize create is; the
// connection stays up. CheckMulti says so beforehand, sending nothing.
func TestOversizeMulti(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		c := connect(t, b.Servers)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		sess := c.Session()
		big := make([]byte, 600<<10)
		ops := []client.Op{client.CreateOp(base+"/a", big, client.Persistent), client.CreateOp(base+"/b", big, client.Persistent)}
		checked := c.CheckMulti(ops...)
		_, err := c.Multi(ctx, ops...)
		var ie *client.InputError
		require.ErrorAs(t, err, &ie)
		require.ErrorIs(t, err, client.ErrInvalidInput)
		require.Contains(t, err.Error(), "jute.maxbuffer")
		require.EqualError(t, checked, err.Error(), "CheckMulti says what Multi refuses")
		require.NoError(t, c.CheckMulti(ops[0]))
		require.NoError(t, c.CheckMulti())
		children, _, err := c.Children(ctx, base)
		require.NoError(t, err)
		require.Empty(t, children)
		require.Same(t, sess, c.Session())
		// One of them alone goes through.
		_, err = c.Multi(ctx, client.CreateOp(base+"/a", big, client.Persistent))
		require.NoError(t, err)
	})
}

// Server errors name the call and the path.
func TestErrorsNameTheCall(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	c := connect(t, srv.Servers())
	_, _, err := c.Get(testCtx(t), "/no/such/node")
	require.ErrorIs(t, err, client.ErrNoNode)
	require.Equal(t, `zkit: get "/no/such/node": zk: node does not exist`, err.Error())
}

// A subscription whose events are never read holds no goroutine once its
// client is closed; its events are still there for a late reader.
func TestUnreadSubscriptionAfterClose(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	c := connect(t, srv.Servers())
	sub := c.Subscribe()
	c.Close()
	eventually(t, 5*time.Second, "no subscription goroutine left", func() bool {
		return !strings.Contains(stacks(), "client.(*Subscription).run")
	})
	var got []client.State
	for ev := range sub.Events() {
		got = append(got, ev.State)
	}
	require.Equal(t, []client.State{client.StateClosed}, got)
}

func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// Close ends a wait for the connection: the channel Changed returned is
// closed, and WaitConnected, waiting while the client is suspended,
// returns ErrClosed at once instead of at the end of its context.
func TestCloseEndsWaitConnected(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()}, client.WithSessionTimeout(zktest.Scale(20*time.Second)))
		changed := c.Changed()
		proxy.Blackhole()
		proxy.ResetAll()
		eventually(t, 20*time.Second, "suspended", func() bool { s, _ := c.Suspended(); return s })
		select {
		case <-changed:
		default:
			t.Fatal("Changed was not closed by the suspension")
		}

		changed = c.Changed()
		errc := make(chan error, 1)
		go func() {
			_, err := c.WaitConnected(testCtx(t))
			errc <- err
		}()
		select {
		case err := <-errc:
			t.Fatalf("WaitConnected returned while suspended: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		c.Close()
		select {
		case <-changed:
		case <-time.After(zktest.Scale(5 * time.Second)):
			t.Fatal("Changed was not closed by Close")
		}
		select {
		case err := <-errc:
			require.ErrorIs(t, err, client.ErrClosed)
		case <-time.After(zktest.Scale(5 * time.Second)):
			t.Fatal("WaitConnected did not return after Close")
		}
	})
}
