package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Cancelling a context returns within 100 ms while the server is
// blackholed; a write cut off that way reports its outcome as unknown.
func TestCancelWhileBlackholed(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()}, client.WithSessionTimeout(zktest.Scale(20*time.Second)))
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(testCtx(t), base))
		proxy.Blackhole()

		calls := map[string]func(ctx context.Context) error{
			"get": func(ctx context.Context) error { _, _, err := c.Get(ctx, base); return err },
			"create": func(ctx context.Context) error {
				_, err := c.Create(ctx, base+"/x", nil, client.Persistent)
				return err
			},
			"sync": func(ctx context.Context) error { return c.Sync(ctx, base) },
			"protected": func(ctx context.Context) error {
				_, err := c.CreateProtected(ctx, base+"/p-", nil, client.EphemeralSequential)
				return err
			},
		}
		for name, call := range calls {
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			sent := proxy.Requests()
			go func() { errc <- call(ctx) }()
			// Cancel once the call's request is on the wire (the proxy
			// counts it, and holds it back).
			eventually(t, 5*time.Second, name+" sent", func() bool { return proxy.Requests() > sent })
			cancel()
			start := time.Now()
			select {
			case err := <-errc:
				elapsed := time.Since(start)
				assert.ErrorIs(t, err, context.Canceled, name)
				assert.Less(t, elapsed, zktest.Scale(time.Second), name) // the reply is held back for good: this is "at once", with room for a loaded machine
				if name == "create" {
					assert.True(t, client.IsOutcomeUnknown(err), "a cut-off write's outcome is unknown: %v", err)
				}
			case <-time.After(zktest.Scale(5 * time.Second)):
				t.Fatalf("%s did not return after cancel", name)
			}
		}

		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, _, err := c.Get(ctx, base)
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	})
}

// Closing the client ends the calls in flight at once, with an error
// matching ErrClosed, even while the server is blackholed and no reply or
// connection error would ever come to end them: the client's own calls,
// the ACL calls, and AddAuth.
func TestCloseWhileBlackholed(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()}, client.WithSessionTimeout(zktest.Scale(20*time.Second)))
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(testCtx(t), base))
		proxy.Blackhole()

		calls := map[string]func() error{
			"get":    func() error { _, _, err := c.Get(context.Background(), base); return err },
			"create": func() error { _, err := c.Create(context.Background(), base+"/x", nil, client.Persistent); return err },
			"getACL": func() error { _, _, err := c.GetACL(context.Background(), base); return err },
			"setACL": func() error { _, err := c.SetACL(context.Background(), base, client.OpenACL, -1); return err },
			"addAuth": func() error {
				return c.AddAuth(context.Background(), "digest", []byte("user:password"))
			},
		}
		type result struct {
			name string
			err  error
		}
		errc := make(chan result, len(calls))
		sent := proxy.Requests()
		for name, call := range calls {
			go func() { errc <- result{name, call()} }()
		}
		eventually(t, 5*time.Second, "every call sent", func() bool { return proxy.Requests() >= sent+int64(len(calls)) })
		closed := make(chan struct{})
		go func() { c.Close(); close(closed) }()
		for range calls {
			select {
			case r := <-errc:
				assert.ErrorIs(t, r.err, client.ErrClosed, r.name)
			case <-time.After(zktest.Scale(5 * time.Second)):
				t.Fatal("a call in flight did not return after Close")
			}
		}
		select {
		case <-closed:
		case <-time.After(zktest.Scale(5 * time.Second)):
			t.Fatal("Close did not return")
		}
	})
}
