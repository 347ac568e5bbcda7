package recipes

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A ChildrenReader whose subscription to its client's events overflowed
// (it fell behind them: a reconnect may have been among those dropped)
// reads everything again, as after a reconnect, and goes on counting the
// reconnects on a new subscription.
func TestChildrenReaderAfterSubscriptionOverflow(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const bound = 4
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
		defer cancel()
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithSubscriptionBuffer(bound), client.WithDialer(proxy.Dialer()))
		path := zktest.UniquePath(t)
		if err := c.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		// A subscription overflowed by a flood of watch events unread.
		sub := c.Subscribe()
		feed, err := c.Watch(ctx, path, client.Recursive, client.WithWatchBuffer(10*bound))
		if err != nil {
			t.Fatal(err)
		}
		defer feed.Close()
		ops := make([]client.Op, 2*bound)
		for i := range ops {
			ops[i] = client.CreateOp(fmt.Sprintf("%s/n%d", path, i), nil, client.Persistent)
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
		if err := sub.Err(); !errors.Is(err, client.ErrSubscriptionOverflow) {
			t.Fatalf("the flood left the subscription with %v", err)
		}

		r := newChildrenReader(ctx, c, path, func(name string, _ []byte, _ *client.Stat) *string { return &name }, sub)
		epoch := func(what string, above int64) int64 {
			t.Helper()
			deadline := time.Now().Add(zktest.Scale(20 * time.Second))
			for {
				if e := r.epoch.Load(); e > above {
					return e
				}
				if time.Now().After(deadline) {
					t.Fatalf("the reader counted no %s", what)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		e := epoch("overflow", 0)
		select {
		case <-r.notify:
		default:
			t.Fatal("the reader was not told to read again")
		}
		names, _, err := r.read(ctx)
		if err != nil || len(names) != 2*bound {
			t.Fatalf("read %d children, %v; want %d", len(names), err, 2*bound)
		}
		proxy.ResetAll()
		epoch("reconnect after the overflow", e)
	})
}
