package lock_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// lockDirs returns n fresh lock paths under one parent.
func lockDirs(t *testing.T, c *client.Client, names ...string) []string {
	t.Helper()
	base := zktest.UniquePath(t)
	if err := c.EnsurePath(recipetest.Context(t), base); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, n := range names {
		dirs = append(dirs, base+"/"+n)
	}
	return dirs
}

// Multi-locks over overlapping sets, given in opposite orders, on several
// sessions: none deadlocks, no two holders of one lock overlap, and every
// fenced increment through the multi-lease's Multi lands.
func TestMultiNoDeadlock(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const perSet, rounds = 3, 8
		ctx, cancel := context.WithTimeout(recipetest.Context(t), zktest.Scale(40*time.Second))
		defer cancel()
		admin := b.Connect(t)
		d := lockDirs(t, admin, "a", "b", "c", "d")
		sets := [][]string{{d[0], d[1], d[2]}, {d[3], d[2], d[1]}, {d[2], d[0]}}
		counter := d[0] + "-counter"
		if _, err := admin.Create(ctx, counter, make([]byte, 8), client.Persistent); err != nil {
			t.Fatal(err)
		}
		var (
			mu         sync.Mutex
			inside     = map[string]int{}
			violations []string
			wg         sync.WaitGroup
		)
		for _, set := range sets {
			for range perSet {
				c := b.Connect(t)
				m := lock.NewMulti(c, set)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range rounds {
						ml, err := m.Lock(ctx)
						if err != nil {
							t.Errorf("multi-lock %v: %v", set, err)
							return
						}
						mu.Lock()
						for _, p := range set {
							if inside[p]++; inside[p] > 1 {
								violations = append(violations, fmt.Sprintf("%s held twice", p))
							}
						}
						mu.Unlock()
						data, st, err := c.Get(ctx, counter)
						if err == nil {
							n := binary.BigEndian.Uint64(data) + 1
							// The counter is guarded by the lock on d[2],
							// which every set holds.
							_, err = ml.Multi(ctx, client.SetOp(counter, binary.BigEndian.AppendUint64(nil, n), st.Version))
						}
						mu.Lock()
						for _, p := range set {
							inside[p]--
						}
						mu.Unlock()
						if uerr := ml.Unlock(ctx); err == nil {
							err = uerr
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
		}
		wg.Wait()
		if ctx.Err() != nil {
			t.Fatal("the multi-locks did not finish before the deadline: deadlock")
		}
		if len(violations) > 0 {
			t.Fatalf("%d violations: %v", len(violations), violations[:min(5, len(violations))])
		}
		data, _, err := admin.Get(ctx, counter)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := binary.BigEndian.Uint64(data), uint64(len(sets)*perSet*rounds); got != want {
			t.Fatalf("fenced counter = %d, want %d", got, want)
		}
		for _, p := range d {
			recipetest.WaitChildren(t, admin, p, 0)
		}
	})
}

// A part lost ends the whole: Done closes with that part's cause (naming
// its node), writes through Multi are refused, Unlock reports the loss and
// releases the other parts. A lost session ends every part.
func TestMultiPartLost(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		d := lockDirs(t, admin, "a", "b", "c")
		c := b.Connect(t)
		ml, err := lock.NewMulti(c, d).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		parts := ml.Parts()
		if len(parts) != 3 || len(ml.Guard()) != 3 {
			t.Fatalf("%d parts, %d guards, want 3", len(parts), len(ml.Guard()))
		}
		if err := admin.Delete(ctx, parts[1].Node(), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, ml.Done(), "the multi-lease's end")
		if !errors.Is(ml.Err(), lock.ErrNodeDeleted) || !errors.Is(ml.Err(), lock.ErrLost) {
			t.Fatalf("multi-lease ended with %v, want ErrNodeDeleted", ml.Err())
		}
		if _, err := ml.Multi(ctx, client.SetOp(d[0], nil, -1)); !errors.Is(err, lock.ErrLost) {
			t.Fatalf("write through an ended multi-lease: %v, want ErrLost", err)
		}
		if _, err := admin.Multi(ctx, append(ml.Guard(), client.SetOp(d[0], nil, -1))...); err == nil {
			t.Fatal("the guards of a multi-lease with a part gone passed")
		}
		if err := ml.Unlock(ctx); !errors.Is(err, lock.ErrLost) {
			t.Fatalf("Unlock after a part was lost: %v, want ErrLost", err)
		}
		for _, p := range d {
			recipetest.WaitChildren(t, admin, p, 0)
		}

		// The session expires: every part, and the whole, end.
		tolerant := b.Connect(t)
		ml, err = lock.NewMulti(tolerant, d, lock.WithSuspendTolerance(time.Hour)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b.ExpireSession(t, tolerant.Session())
		recipetest.Within(t, ml.Done(), "the multi-lease's end after an expiry")
		if !client.IsSessionLost(ml.Err()) {
			t.Fatalf("multi-lease ended with %v, want a lost session", ml.Err())
		}
		next, err := lock.NewMulti(admin, d).TryLock(ctx)
		if err != nil {
			t.Fatalf("TryLock after the holder's expiry: %v", err)
		}
		if next.Token() <= ml.Token() {
			t.Fatalf("token %d after %d", next.Token(), ml.Token())
		}
		if err := next.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A multi-lock that fails (deadline, cancellation, TryLock on a taken
// part) holds nothing and leaves no node: the parts it had taken are
// released, its waiting node is deleted.
func TestMultiFailureLeavesNothing(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		d := lockDirs(t, admin, "a", "b", "c")
		holder, err := lock.New(admin, d[1]).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := lock.NewMulti(b.Connect(t), []string{d[2], d[1], d[0]})
		tctx, cancel := context.WithTimeout(ctx, zktest.Scale(300*time.Millisecond))
		defer cancel()
		if _, err := m.Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("multi-lock past its deadline: %v", err)
		}
		want := func() {
			t.Helper()
			recipetest.WaitChildren(t, admin, d[0], 0)
			recipetest.WaitChildren(t, admin, d[1], 1) // the holder's only
			recipetest.WaitChildren(t, admin, d[2], 0)
		}
		want()
		cctx, cancelC := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { _, err := m.Lock(cctx); done <- err }()
		recipetest.WaitChildren(t, admin, d[1], 2)
		cancelC()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled multi-lock: %v", err)
		}
		want()
		if _, err := m.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("TryLock with a part taken: %v, want ErrLocked", err)
		}
		want()
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		ml, err := m.TryLock(ctx)
		if err != nil {
			t.Fatalf("TryLock on free locks: %v", err)
		}
		if err := ml.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// The multi-lease's token grows from one holder to the next of any
// shared part, even when the later one's part nodes are all older than
// the earlier one's newest part node: X waits for S behind W, Y queues on
// S behind X, and X creates its node on T only once it holds S.
func TestMultiToken(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		d := lockDirs(t, admin, "r", "s", "t")
		r, s, tt := d[0], d[1], d[2]
		w, err := lock.New(admin, s).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		type res struct {
			ml  *lock.MultiLease
			err error
		}
		xc, yc := make(chan res, 1), make(chan res, 1)
		go func() { ml, err := lock.NewMulti(b.Connect(t), []string{s, tt}).Lock(ctx); xc <- res{ml, err} }()
		recipetest.WaitChildren(t, admin, s, 2)
		go func() { ml, err := lock.NewMulti(b.Connect(t), []string{r, s}).Lock(ctx); yc <- res{ml, err} }()
		recipetest.WaitChildren(t, admin, s, 3)
		if err := w.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		x := <-xc
		if x.err != nil {
			t.Fatal(x.err)
		}
		y0 := recipetest.Children(t, admin, s)
		if len(y0) != 2 {
			t.Fatalf("nodes on %s: %v", s, y0)
		}
		for _, p := range x.ml.Parts() {
			if x.ml.Token() < p.Token() {
				t.Fatalf("token %d below a part's %d", x.ml.Token(), p.Token())
			}
		}
		if err := x.ml.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		y := <-yc
		if y.err != nil {
			t.Fatal(y.err)
		}
		newest := int64(0)
		for _, p := range y.ml.Parts() {
			newest = max(newest, p.Token())
		}
		if newest >= x.ml.Parts()[1].Token() {
			t.Fatalf("setup: Y's newest part %d is not older than X's %d", newest, x.ml.Parts()[1].Token())
		}
		if y.ml.Token() <= x.ml.Token() {
			t.Fatalf("Y's token %d after X's %d", y.ml.Token(), x.ml.Token())
		}
		if err := y.ml.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Bad input is an *client.InputError before anything is sent.
func TestMultiBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		base := zktest.UniquePath(t)
		sent := proxy.Requests()
		for _, paths := range [][]string{nil, {}, {base + "/a", "relative"}, {base + "/a", base + "//b"}, {base + "/a", "/"}} {
			for name, call := range map[string]func(context.Context) (*lock.MultiLease, error){
				"Lock": lock.NewMulti(c, paths).Lock, "TryLock": lock.NewMulti(c, paths).TryLock,
			} {
				var ie *client.InputError
				if _, err := call(ctx); !errors.As(err, &ie) {
					t.Errorf("%s on %q: %v, want an *client.InputError", name, paths, err)
				}
			}
		}
		if n := proxy.Requests() - sent; n != 0 {
			t.Errorf("bad input sent %d requests", n)
		}
	})
}
