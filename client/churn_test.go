package client_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Many reconnects with calls in flight (run it with -race). Every call
// returns, and says what happened: a create reported done exists, one
// reported not sent (retryable) does not, and only a write that was sent
// may have an unknown outcome. The watches set before each reconnect are
// set again, the credentials are sent again, the session lives on, and
// closing the client leaves no goroutine behind.
func TestReconnectChurn(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		goroutines := runtime.NumGoroutine()
		proxy := zktest.NewProxy(t, b.Addr())
		c, err := client.Connect(ctx, []string{proxy.Addr()}, client.WithDigestAuth("alice", "secret"),
			client.WithSessionTimeout(zktest.Scale(3*time.Second)))
		require.NoError(t, err)
		observer := connect(t, b.Servers)
		base := zktest.UniquePath(t)
		require.NoError(t, observer.EnsurePath(ctx, base))
		private, err := c.Create(ctx, base+"/private", nil, client.Persistent,
			client.WithACL(client.DigestACL(client.PermAll, "alice", "secret")...))
		require.NoError(t, err)
		sess := c.Session()
		sub := c.Subscribe()

		type outcome int
		const (
			done outcome = iota
			notSent
			unknown
		)
		var (
			mu       sync.Mutex
			outcomes = map[string]outcome{}
			answered atomic.Int64
			stop     = make(chan struct{})
			wg       sync.WaitGroup
		)
		record := func(path string, err error) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				outcomes[path] = done
			case client.IsOutcomeUnknown(err):
				outcomes[path] = unknown
			case client.IsRetryable(err):
				outcomes[path] = notSent
			default:
				t.Errorf("create %s: %v", path, err)
			}
		}
		// read checks a read's error: none, or the disconnect's.
		read := func(what string, err error) {
			if err != nil && !client.IsRetryable(err) {
				t.Errorf("%s: %v", what, err)
			}
		}
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					path := fmt.Sprintf("%s/w%d-%d", base, w, i)
					_, err := c.Create(ctx, path, nil, client.Persistent)
					record(path, err)
					if client.IsRetryable(err) {
						_, _ = c.WaitConnected(ctx) // not a tight loop while disconnected
					}
					_, _, err = c.Get(ctx, private)
					read("get", err)
					_, _, _, err = c.ExistsW(ctx, path)
					read("existsW", err)
					if err == nil {
						answered.Add(1)
					}
				}
			}()
		}

		watched, err := observer.Create(ctx, base+"/watched", nil, client.Persistent)
		require.NoError(t, err)
		// Connections shorter than a second count as failed attempts, so
		// the reconnects come at the cap of the delays: a tenth of the
		// session timeout.
		const reconnects = 30
		for i := range reconnects {
			_, _, ch, err := c.GetW(ctx, watched)
			require.NoError(t, err)
			before := answered.Load()
			eventually(t, 10*time.Second, "calls answered", func() bool { return answered.Load() > before+2 })
			proxy.ResetAll()
			for ev := nextState(t, sub, 10*time.Second); ev.State != client.StateReconnected; ev = nextState(t, sub, 10*time.Second) {
				require.Equal(t, client.StateSuspended, ev.State, "reconnect %d", i)
			}
			_, err = observer.Set(ctx, watched, []byte(fmt.Sprint(i)), -1)
			require.NoError(t, err)
			select {
			case ev := <-ch:
				require.Equal(t, client.EventNodeDataChanged, ev.Type, "reconnect %d", i)
			case <-time.After(zktest.Scale(10 * time.Second)):
				t.Fatalf("reconnect %d: a watch set before it did not fire", i)
			}
		}
		close(stop)
		wg.Wait()
		assert.Same(t, sess, c.Session(), "the session lives on")

		children, _, err := observer.Children(ctx, base)
		require.NoError(t, err)
		exists := map[string]bool{}
		for _, ch := range children {
			exists[base+"/"+ch] = true
		}
		counts := map[outcome]int{}
		for path, o := range outcomes {
			counts[o]++
			switch o {
			case done:
				assert.True(t, exists[path], "%s: created, but missing", path)
			case notSent:
				assert.False(t, exists[path], "%s: not sent, but created", path)
			}
		}
		t.Logf("%d reconnects; creates done %d, not sent %d, unknown %d", reconnects, counts[done], counts[notSent], counts[unknown])

		sub.Close()
		c.Close()
		observer.Close()
		proxy.Close()
		deadline := time.Now().Add(zktest.Scale(10 * time.Second))
		for runtime.NumGoroutine() > goroutines {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines after Close, %d before Connect:\n%s",
					runtime.NumGoroutine(), goroutines, buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}
