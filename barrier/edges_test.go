package barrier_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Closing the client of a member blocked in Enter returns promptly with an
// error matching client.ErrClosed, leaves no node and no goroutine.
func TestCloseWhileEntering(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		base := runtime.NumGoroutine()
		c := b.Connect(t)
		d := barrier.NewDouble(c, path, 2)
		done := make(chan error, 1)
		go func() { done <- d.Enter(ctx) }()
		waitMembers(t, admin, path, 1)
		c.Close()
		err := recv(t, done, "Enter after Close")
		if !errors.Is(err, client.ErrClosed) {
			t.Fatalf("Enter after Close returned %v, want client.ErrClosed", err)
		}
		waitMembers(t, admin, path, 0)
		recipetest.WaitGoroutines(t, base)
	})
}

// Closing the client of a member blocked in Leave: ErrClosed for it,
// ErrMemberLost for the other, no goroutine left.
func TestCloseWhileLeaving(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		for _, which := range []string{"lowest", "other"} {
			t.Run(which, func(t *testing.T) {
				ctx := recipetest.Context(t)
				admin := b.Connect(t)
				path := barrierPath(t, admin)
				base := runtime.NumGoroutine()
				ms := newMembers(t, b, path, 2, 2)
				enterAll(t, ctx, ms)
				low, other := ms[0], ms[1]
				if other.d.Node() < low.d.Node() {
					low, other = other, low
				}
				closing, staying := low, other
				if which == "other" {
					closing, staying = other, low
				}
				done := make(chan error, 1)
				go func() { done <- closing.d.Leave(ctx) }()
				if which == "lowest" {
					quiet(t, done, "the lowest left while the other was inside")
				} else {
					waitMembers(t, admin, path, 1)
					// the other has deleted its node and waits for the lowest
					quiet(t, done, "the other left while the lowest was inside")
				}
				closing.c.Close()
				err := recv(t, done, "Leave after Close")
				if which == "lowest" && !errors.Is(err, client.ErrClosed) {
					t.Fatalf("Leave after Close returned %v, want client.ErrClosed", err)
				}
				if which == "other" && !errors.Is(err, client.ErrClosed) {
					t.Fatalf("Leave after Close returned %v, want client.ErrClosed", err)
				}
				serr := staying.d.Leave(ctx)
				if which == "lowest" && !errors.Is(serr, barrier.ErrMemberLost) {
					t.Fatalf("the staying member's Leave: %v, want ErrMemberLost", serr)
				}
				if which == "other" && serr != nil && !errors.Is(serr, barrier.ErrMemberLost) {
					t.Fatalf("the staying member's Leave: %v", serr)
				}
				waitMembers(t, admin, path, 0)
				staying.c.Close()
				recipetest.WaitGoroutines(t, base)
			})
		}
	})
}

// A count of 1: every Enter passes alone, rounds follow one another on
// the same path, and nothing is left.
func TestCountOne(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		d := barrier.NewDouble(b.Connect(t), path, 1)
		for round := range 3 {
			if err := d.Enter(ctx); err != nil {
				t.Fatalf("round %d: Enter: %v", round, err)
			}
			if err := d.Leave(ctx); err != nil {
				t.Fatalf("round %d: Leave: %v", round, err)
			}
			if got := recipetest.Children(t, admin, path); len(got) != 0 {
				t.Fatalf("round %d: left behind: %v", round, got)
			}
		}
	})
}

// Count below 1 is refused with nothing sent.
func TestBadCountNothingSent(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		base := zktest.UniquePath(t)
		sent := proxy.Requests()
		for _, count := range []int{0, -1, -1 << 31} {
			d := barrier.NewDouble(c, base+"/b", count)
			if err := d.Enter(ctx); !isInputError(err) {
				t.Errorf("Enter with count %d = %v", count, err)
			}
			if err := d.Leave(ctx); !errors.Is(err, barrier.ErrNotEntered) {
				t.Errorf("Leave with count %d = %v", count, err)
			}
		}
		if n := proxy.Requests() - sent; n != 0 {
			t.Errorf("bad input sent %d requests", n)
		}
		_ = context.Background
	})
}
