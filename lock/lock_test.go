package lock_test

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

func TestMutualExclusion(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const sessions, perSession, rounds = 8, 4, 5 // 32 contenders
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		dir := recipetest.LockDir(t, admin)
		counter := dir + "-counter"
		if _, err := admin.Create(ctx, counter, make([]byte, 8), client.Persistent); err != nil {
			t.Fatal(err)
		}
		var res recipetest.Exclusion
		var wg sync.WaitGroup
		errs := make(chan error, sessions*perSession)
		for s := 0; s < sessions; s++ {
			c := b.Connect(t)
			for g := 0; g < perSession; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l := lock.New(c, dir)
					for i := 0; i < rounds; i++ {
						lease, err := l.Lock(ctx)
						if err != nil {
							errs <- err
							return
						}
						res.Enter(lease.Token())
						// A fenced write: read the counter, write it back
						// plus one, guarded by the lease.
						data, st, err := c.Get(ctx, counter)
						if err == nil {
							n := binary.BigEndian.Uint64(data) + 1
							_, err = lease.Multi(ctx, client.SetOp(counter, binary.BigEndian.AppendUint64(nil, n), st.Version))
						}
						res.Leave()
						if uerr := lease.Unlock(ctx); err == nil {
							err = uerr
						}
						if err != nil {
							errs <- err
							return
						}
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if v := res.Violations(); len(v) > 0 {
			t.Fatalf("mutual exclusion violated: %v", v)
		}
		data, _, err := admin.Get(ctx, counter)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := binary.BigEndian.Uint64(data), uint64(sessions*perSession*rounds); got != want {
			t.Fatalf("guarded counter = %d, want %d", got, want)
		}
		recipetest.WaitChildren(t, admin, dir, 0)
	})
}

func TestFIFO(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const waiters = 6
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		first, err := lock.New(c, dir).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for i := 0; i < waiters; i++ {
			cw := b.Connect(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				lease, err := lock.New(cw, dir).Lock(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				lease.Unlock(ctx)
			}()
			// The next waiter joins only once this one is in the queue.
			recipetest.WaitChildren(t, c, dir, i+2)
		}
		if err := first.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		for i, w := range order {
			if w != i {
				t.Fatalf("acquired in order %v, want 0..%d", order, waiters-1)
			}
		}
	})
}

// A waiter whose predecessor gives up must go on waiting for the holder.
func TestAbandonedPredecessor(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		holder, err := lock.New(c, dir).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		bctx, cancelB := context.WithCancel(ctx)
		bDone := make(chan error, 1)
		go func() {
			_, err := lock.New(b.Connect(t), dir).Lock(bctx)
			bDone <- err
		}()
		recipetest.WaitChildren(t, c, dir, 2)
		cc := b.Connect(t)
		sub := cc.Subscribe()
		defer sub.Close()
		var released atomic.Bool
		cLease := make(chan *lock.Lease, 1)
		go func() {
			l, err := lock.New(cc, dir).Lock(ctx)
			if err != nil {
				t.Error(err)
			} else if !released.Load() {
				t.Error("C acquired while the holder still held")
			}
			cLease <- l
		}()
		recipetest.WaitChildren(t, c, dir, 3)
		bNodes := recipetest.Children(t, c, dir)
		cancelB()
		if err := <-bDone; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Lock returned %v", err)
		}
		// Wait until C has been told that the node it watched is gone (if
		// C's watch on it was set in time; otherwise C found it gone), and
		// give C time to (wrongly) take the lock.
		recipetest.WaitEventFor(t, sub, zktest.Scale(time.Second), func(ev client.Event) bool {
			return ev.Type == client.EventNodeDeleted && contains(bNodes, ev.Path)
		})
		time.Sleep(zktest.Scale(100 * time.Millisecond))
		released.Store(true)
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if l := <-cLease; l != nil {
			l.Unlock(ctx)
		}
	})
}

func contains(names []string, path string) bool {
	for _, n := range names {
		if len(path) > len(n) && path[len(path)-len(n)-1:] == "/"+n {
			return true
		}
	}
	return false
}

func TestSessionExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		ca := b.Connect(t)
		dir := recipetest.LockDir(t, ca)
		// Tolerant of suspension, so that the cause is the expiry itself,
		// not the disconnection that comes with it.
		held, err := lock.New(ca, dir, lock.WithSuspendTolerance(time.Hour)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		next := make(chan *lock.Lease, 1)
		go func() {
			l, err := lock.New(b.Connect(t), dir).Lock(ctx)
			if err != nil {
				t.Error(err)
			}
			next <- l
		}()
		recipetest.WaitChildren(t, ca, dir, 2)
		b.ExpireSession(t, held.Session())
		recipetest.Within(t, held.Done(), "the expired holder's Done")
		if err := held.Err(); !errors.Is(err, recipes.ErrLost) || !errors.Is(err, client.ErrSessionLost) {
			t.Fatalf("lease ended with %v, want session lost", err)
		}
		l := <-next
		if l == nil {
			t.FailNow()
		}
		if l.Token() <= held.Token() {
			t.Fatalf("next token %d not above expired holder's %d", l.Token(), held.Token())
		}
		l.Unlock(ctx)
		if err := held.Unlock(ctx); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("Unlock of a lost lease returned %v, want ErrLost", err)
		}
	})
}

func TestLostCreateReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		dir := recipetest.LockDir(t, admin)
		if err := admin.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		c := b.Connect(t, b.CutNextCreate(t, dir)...)
		lease, err := lock.New(c, dir).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := recipetest.Children(t, admin, dir); len(got) != 1 || dir+"/"+got[0] != lease.Node() {
			t.Fatalf("after a lost create reply: nodes %v, lease %s", got, lease.Node())
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		recipetest.WaitChildren(t, admin, dir, 0)
	})
}

func TestCancelWhileWaiting(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		holder, err := lock.New(c, dir).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := lock.New(b.Connect(t), dir).Lock(wctx)
			done <- err
		}()
		recipetest.WaitChildren(t, c, dir, 2)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock returned %v, want context.Canceled", err)
		}
		recipetest.WaitChildren(t, c, dir, 1)
		// A timeout is the same.
		tctx, cancelT := context.WithTimeout(ctx, zktest.Scale(200*time.Millisecond))
		defer cancelT()
		if _, err := lock.New(b.Connect(t), dir).Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Lock returned %v, want context.DeadlineExceeded", err)
		}
		recipetest.WaitChildren(t, c, dir, 1)
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTryLock(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		l := lock.New(c, dir)
		held, err := l.TryLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lock.New(b.Connect(t), dir).TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("TryLock on a held lock: %v, want ErrLocked", err)
		}
		if got := recipetest.Children(t, c, dir); len(got) != 1 {
			t.Fatalf("a failed TryLock left nodes: %v", got)
		}
		held.Unlock(ctx)
		again, err := l.TryLock(ctx)
		if err != nil {
			t.Fatalf("TryLock on a free lock: %v", err)
		}
		again.Unlock(ctx)
	})
}

func TestInvalidPath(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		for _, p := range []string{"", "relative", base + "//x", base + "/x/", base + "/./x", "/zktest/bad\x00name"} {
			_, err := lock.New(c, p).Lock(ctx)
			var ie *client.InputError
			if !errors.As(err, &ie) || !errors.Is(err, client.ErrInvalidInput) {
				t.Errorf("Lock(%q) = %v, want an *client.InputError", p, err)
			}
		}
		if ok, _, err := c.Exists(ctx, base); err != nil || ok {
			t.Fatalf("something was created under %s (exists=%v, err=%v)", base, ok, err)
		}
		if !c.Session().Alive() {
			t.Fatal("bad input cost the session")
		}
	})
}

func TestForeignNodesIgnored(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		if err := c.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"readme", "lock-", "lock-12x", "_c_junk-other-0000000001"} {
			if _, err := c.Create(ctx, dir+"/"+name, nil, client.Persistent); err != nil {
				t.Fatal(err)
			}
		}
		lease, err := lock.New(c, dir).TryLock(ctx)
		if err != nil {
			t.Fatalf("TryLock with foreign nodes around: %v", err)
		}
		lease.Unlock(ctx)
	})
}

func TestNodeDeletedEndsLease(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		lease, err := lock.New(c, dir).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Connect(t).Delete(ctx, lease.Node(), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, lease.Done(), "Done after the node was deleted")
		if !errors.Is(lease.Err(), recipes.ErrNodeDeleted) {
			t.Fatalf("lease ended with %v, want ErrNodeDeleted", lease.Err())
		}
		if _, err := lease.Multi(ctx, client.CreateOp(dir+"-x", nil, client.Persistent)); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("guarded write after loss: %v, want ErrLost", err)
		}
		if ok, _, _ := c.Exists(ctx, dir+"-x"); ok {
			t.Fatal("guarded write applied after loss")
		}
	})
}

func TestSuspensionEndsLease(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		dir := recipetest.LockDir(t, admin)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(4*time.Second)))...)
		tolerant, err := lock.New(c, dir+"-t", lock.WithSuspendTolerance(time.Hour)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lease, err := lock.New(c, dir).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cut()
		recipetest.Within(t, lease.Done(), "Done after the connection was suspended")
		if !errors.Is(lease.Err(), recipes.ErrSuspended) {
			t.Fatalf("lease ended with %v, want ErrSuspended", lease.Err())
		}
		if tolerant.Err() != nil {
			t.Fatalf("the tolerant lease ended too: %v", tolerant.Err())
		}
		heal()
		// The session survives; zkit deletes the lost lease's node, so
		// that the lock is free again.
		recipetest.WaitChildren(t, admin, dir, 0)
		if tolerant.Err() != nil {
			t.Fatalf("the tolerant lease ended: %v", tolerant.Err())
		}
		tolerant.Unlock(ctx)
	})
}
