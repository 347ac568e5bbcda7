package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// fillChildren creates children of dir, names of 1000 bytes, until their
// names add up to more than size bytes, a few hundred to a Multi.
func fillChildren(t *testing.T, ctx context.Context, c *client.Client, dir string, size int) {
	t.Helper()
	pad := strings.Repeat("x", 990)
	var ops []client.Op
	for i, total := 0, 0; total <= size; i++ {
		name := fmt.Sprintf("%s%010d", pad, i)
		total += len(name) + 4
		ops = append(ops, client.CreateOp(dir+"/"+name, nil, client.Persistent))
		if len(ops) == 500 || total > size {
			_, err := c.Multi(ctx, ops...)
			require.NoError(t, err)
			ops = ops[:0]
		}
	}
}

// countingDialer dials as net.DialTimeout does and counts the connections.
func countingDialer(n *atomic.Int32) client.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		n.Add(1)
		return net.DialTimeout(network, address, timeout)
	}
}

// requireTooLarge checks that err is the typed, non-retryable error of a
// reply larger than limit, naming op and path.
func requireTooLarge(t *testing.T, err error, op, path string, limit int) {
	t.Helper()
	require.ErrorIs(t, err, client.ErrReplyTooLarge)
	var big *client.ReplyTooLargeError
	require.ErrorAs(t, err, &big)
	assert.Equal(t, op, big.Op)
	assert.Equal(t, path, big.Path)
	assert.Equal(t, limit, big.Limit)
	assert.Greater(t, big.Size, big.Limit)
	assert.Contains(t, err.Error(), fmt.Sprint(limit))
	assert.Contains(t, err.Error(), path)
	assert.False(t, client.IsRetryable(err), "retryable: %v", err)
	assert.False(t, client.IsTransient(err), "transient: %v", err)
	assert.False(t, client.IsOutcomeUnknown(err), "outcome unknown: %v", err)
	assert.False(t, client.IsSessionLost(err), "session lost: %v", err)
}

// A reply longer than the client reads (WithMaxBuffer + 64 KiB; ZooKeeper
// does not bound its replies) fails its call with a *ReplyTooLargeError
// that no retry loop retries, and the connection, the session and the
// other calls go on: the reply is skipped, not read.
func TestReplyTooLarge(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		w := connect(t, b.Servers)
		base := zktest.UniquePath(t)
		big, small, data := base+"/big", base+"/small", base+"/data"
		require.NoError(t, w.EnsurePath(ctx, big))
		require.NoError(t, w.EnsurePath(ctx, small))
		// More names than a client with the default limit reads in one
		// reply; data more than a client with a limit of 4096 reads.
		fillChildren(t, ctx, w, big, client.DefaultMaxBuffer+64<<10)
		_, err := w.Create(ctx, data, make([]byte, 100<<10), client.Persistent)
		require.NoError(t, err)

		for _, maxBuffer := range []int{client.DefaultMaxBuffer, 4096} {
			t.Run(fmt.Sprint(maxBuffer), func(t *testing.T) {
				var dials atomic.Int32
				c := connect(t, b.Servers, client.WithMaxBuffer(maxBuffer), client.WithDialer(countingDialer(&dials)))
				limit := maxBuffer + 64<<10
				sess := c.Session()

				// Other calls in flight meanwhile are answered.
				var wg sync.WaitGroup
				stop := make(chan struct{})
				var others atomic.Int32
				defer func() {
					close(stop)
					wg.Wait()
				}()
				for range 2 {
					wg.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							if _, _, err := c.Children(ctx, small); !assert.NoError(t, err) {
								return
							}
							others.Add(1)
						}
					})
				}

				_, _, err := c.Children(ctx, big)
				requireTooLarge(t, err, "children", big, limit)
				_, _, _, err = c.ChildrenW(ctx, big)
				requireTooLarge(t, err, "children", big, limit)
				if maxBuffer == 4096 {
					_, _, err = c.Get(ctx, data)
					requireTooLarge(t, err, "get", data, limit)
					_, _, _, err = c.GetW(ctx, data)
					requireTooLarge(t, err, "get", data, limit)
				}
				// A retry loop ends with it at once instead of looping.
				rctx, cancel := context.WithTimeout(ctx, zktest.Scale(10*time.Second))
				defer cancel()
				calls := 0
				err = c.Retry(rctx, func(ctx context.Context) error {
					calls++
					_, _, err := c.Children(ctx, big)
					return err
				})
				requireTooLarge(t, err, "children", big, limit)
				assert.Equal(t, 1, calls)
				// A create listed with its too large parent is created,
				// without a listing.
				p, listing, err := c.CreateListed(ctx, big+"/listed", nil, client.Persistent)
				require.NoError(t, err)
				assert.Equal(t, big+"/listed", p)
				assert.Nil(t, listing)
				require.NoError(t, c.Delete(ctx, p, -1))

				eventually(t, 10*time.Second, "other calls", func() bool { return others.Load() >= 10 })
				_, _, err = c.Children(ctx, small)
				require.NoError(t, err)
				assert.Equal(t, int32(1), dials.Load(), "the connection was dropped")
				assert.Same(t, sess, c.Session())
				suspended, _ := c.Suspended()
				assert.False(t, suspended)
			})
		}
	})
}

// A too large reply's error names the call and the limit.
func TestReplyTooLargeError(t *testing.T) {
	t.Parallel()
	err := &client.ReplyTooLargeError{Op: "children", Path: "/a", Size: 2000000, Limit: client.DefaultMaxBuffer + 64<<10}
	assert.True(t, errors.Is(err, client.ErrReplyTooLarge))
	assert.Equal(t, `zkit: children "/a": reply too large: 2000000 bytes, more than the 1114111 the client reads (WithMaxBuffer + 64 KiB)`, err.Error())
}

// A Multi whose reply could be longer than the client reads (a set's reply
// carries a Stat of 68 bytes, more than the request of a set without data)
// is refused before anything is sent: sent, it would be applied and its
// results never read.
func TestMultiReply(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		c := connect(t, b.Servers)
		p := zktest.UniquePath(t) + "/n"
		require.NoError(t, c.EnsurePath(ctx, p))
		// As many sets as the request limit allows: about 32 bytes and
		// the path each, and more than 77 bytes each in the reply.
		n := (client.DefaultMaxBuffer - 1024) / (32 + len(p))
		require.Greater(t, 77*n, client.DefaultMaxBuffer+64<<10, "the path is too long for the test")
		ops := make([]client.Op, n)
		for i := range ops {
			ops[i] = client.SetOp(p, nil, -1)
		}
		require.ErrorIs(t, c.CheckMulti(ops...), client.ErrInvalidInput)
		_, err := c.Multi(ctx, ops...)
		require.ErrorIs(t, err, client.ErrInvalidInput)
		assert.Contains(t, err.Error(), "reply")
		_, st, err := c.Get(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, int32(0), st.Version, "the multi was applied")
		// Half as many go.
		_, err = c.Multi(ctx, ops[:n/2]...)
		require.NoError(t, err)
	})
}
