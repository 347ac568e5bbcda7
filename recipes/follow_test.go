package recipes_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// readData follows a node's data; a missing node reads as nil.
func readData(c *client.Client, path string) recipes.ReadFunc[[]byte] {
	return func(ctx context.Context) ([]byte, <-chan client.WatchEvent, error) {
		data, _, w, err := c.GetW(ctx, path)
		if errors.Is(err, client.ErrNoNode) {
			var ok bool
			ok, _, w, err = c.ExistsW(ctx, path)
			if err == nil && ok {
				w = closedWatch() // created meanwhile: read again
			}
			return nil, w, err
		}
		return data, w, err
	}
}

func closedWatch() <-chan client.WatchEvent {
	ch := make(chan client.WatchEvent)
	close(ch)
	return ch
}

// next receives the next value within a scaled deadline.
func next(t *testing.T, f *recipes.Feed[[]byte]) []byte {
	t.Helper()
	select {
	case v, ok := <-f.Values():
		if !ok {
			t.Fatalf("feed ended: %v", f.Err())
		}
		return v
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("no value within the deadline")
	}
	return nil
}

// until receives values until one equals want.
func until(t *testing.T, f *recipes.Feed[[]byte], want string) {
	t.Helper()
	for {
		if v := next(t, f); string(v) == want {
			return
		}
	}
}

// A slow receiver skips values but ends on the last one written.
func TestFollowEndsOnTheCurrentValue(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
		defer cancel()
		c, w := b.Connect(t), b.Connect(t)
		path := zktest.UniquePath(t)
		f := recipes.Follow(ctx, c, readData(c, path), bytes.Equal)
		if v := next(t, f); v != nil {
			t.Fatalf("missing node read as %q", v)
		}
		if err := w.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		const n = 300
		for i := 1; i <= n; i++ {
			if _, err := w.Set(ctx, path, fmt.Appendf(nil, "%d", i), -1); err != nil {
				t.Fatal(err)
			}
		}
		until(t, f, fmt.Sprint(n))
		// Nothing more is sent: the value did not change again.
		select {
		case v := <-f.Values():
			t.Fatalf("a value after the last write: %q", v)
		case <-time.After(zktest.Scale(200 * time.Millisecond)):
		}
		cancel()
		for range f.Values() {
		}
		if !errors.Is(f.Err(), context.Canceled) {
			t.Fatalf("Err after cancel = %v", f.Err())
		}
	})
}

// A change made while the follower's session expired (its watch gone with
// it) is still seen under the new session.
func TestFollowAcrossSessionExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
		defer cancel()
		c, w := b.Connect(t), b.Connect(t)
		path := zktest.UniquePath(t)
		if err := w.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Set(ctx, path, []byte("before"), -1); err != nil {
			t.Fatal(err)
		}
		f := recipes.Follow(ctx, c, readData(c, path), bytes.Equal)
		until(t, f, "before")
		old := c.Session()
		b.ExpireSession(t, old)
		<-old.Done()
		if _, err := w.Set(ctx, path, []byte("after"), -1); err != nil {
			t.Fatal(err)
		}
		until(t, f, "after")
	})
}

// A change made while the follower was partitioned is seen once it is
// back, and the re-read after the reconnect sends nothing twice.
func TestFollowAcrossPartition(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
		defer cancel()
		opts, cut, heal := b.Blackhole(t)
		c, w := b.Connect(t, opts...), b.Connect(t)
		path := zktest.UniquePath(t)
		if err := w.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Set(ctx, path, []byte("v1"), -1); err != nil {
			t.Fatal(err)
		}
		f := recipes.Follow(ctx, c, readData(c, path), bytes.Equal)
		until(t, f, "v1")
		sub := c.Subscribe()
		defer sub.Close()
		cut()
		waitState(t, sub, client.StateSuspended)
		if _, err := w.Set(ctx, path, []byte("v2"), -1); err != nil {
			t.Fatal(err)
		}
		heal()
		waitState(t, sub, client.StateReconnected)
		if v := next(t, f); string(v) != "v2" {
			t.Fatalf("after the partition: %q, want v2", v)
		}
		select {
		case v := <-f.Values():
			t.Fatalf("sent again after the reconnect: %q", v)
		case <-time.After(zktest.Scale(300 * time.Millisecond)):
		}
	})
}

// Follow falling behind its client's events (a read held while a flood
// of them passes the subscription's buffer) does not end the feed, as the
// client's close would: Follow subscribes again and reads again, since a
// reconnect may have been among the events dropped.
func TestFollowAfterSubscriptionOverflow(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const bound = 8
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
		defer cancel()
		c := b.Connect(t, client.WithSubscriptionBuffer(bound))
		path := zktest.UniquePath(t)
		if err := c.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		feed, err := c.Watch(ctx, path, client.Recursive, client.WithWatchBuffer(10*bound))
		if err != nil {
			t.Fatal(err)
		}
		defer feed.Close()
		witness := c.Subscribe()
		defer witness.Close()

		// The first read's watch fires at once; the second read is held
		// until the flood is over; the third and later ones wait.
		var reads atomic.Int32
		held, release := make(chan struct{}), make(chan struct{})
		var released sync.Once
		free := func() { released.Do(func() { close(release) }) }
		defer free()
		read := func(ctx context.Context) ([]byte, <-chan client.WatchEvent, error) {
			n := reads.Add(1)
			switch n {
			case 1:
				return []byte("1"), closedWatch(), nil
			case 2:
				close(held)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return fmt.Appendf(nil, "%d", n), nil, nil
		}
		f := recipes.Follow(ctx, c, read, nil)
		select {
		case <-held:
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("Follow did not read again")
		}
		ops := make([]client.Op, 2*bound)
		for i := range ops {
			ops[i] = client.CreateOp(fmt.Sprintf("%s/n%d", path, i), nil, client.Persistent)
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
		if err := witness.Err(); err == nil {
			t.Fatal("the flood did not overflow a subscription that was not read")
		}
		free()
		until(t, f, "3")
		if n := reads.Load(); n != 3 {
			t.Fatalf("%d reads, want 3", n)
		}
	})
}

func waitState(t *testing.T, sub *client.Subscription, want client.State) {
	t.Helper()
	deadline := time.After(zktest.Scale(30 * time.Second))
	for {
		select {
		case ev := <-sub.Events():
			if ev.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v event", want)
		}
	}
}

// An error that retrying cannot cure ends the feed with that error.
func TestFollowStopsOnInputError(t *testing.T) {
	c := zktest.ReferenceBackend(t).Connect(t)
	f := recipes.Follow(context.Background(), c, readData(c, "no-slash"), bytes.Equal)
	select {
	case _, ok := <-f.Values():
		if ok {
			t.Fatal("a value for an invalid path")
		}
	case <-time.After(zktest.Scale(10 * time.Second)):
		t.Fatal("feed did not end")
	}
	if !errors.Is(f.Err(), client.ErrInvalidInput) {
		t.Fatalf("Err = %v, want an input error", f.Err())
	}
}
