package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/zktest"
)

// The behaviour every queue recipe owes, for both the write lock
// (exclusive) and the read lock (shared): see recipetest.RunQueueContract.
// This file keeps what is the read/write lock's own: readers share, a
// reader waits only for the nearest lower writer, no upgrade, no downgrade.
func TestContract(t *testing.T) {
	type rw = recipetest.Mode[*rwlock.RWLock, *rwlock.Lease]
	recipetest.RunQueueContract(t, recipetest.QueueRecipe[*rwlock.RWLock, *rwlock.Lease]{
		New: func(p recipetest.Participant) *rwlock.RWLock {
			return rwlock.New(p.Client, p.Path, rwlock.WithSuspendTolerance(p.SuspendTolerance))
		},
		Modes: []rw{
			{Name: "write lock", Marker: "__WRIT__", Exclusive: true, Acquire: (*rwlock.RWLock).Lock, Try: (*rwlock.RWLock).TryLock},
			{Name: "read lock", Marker: "__READ__", Acquire: (*rwlock.RWLock).RLock, Try: (*rwlock.RWLock).TryRLock},
		},
		Release: (*rwlock.Lease).Unlock,
	})
}

// resource counts readers and writers inside, and checks write tokens.
type resource struct {
	mu               sync.Mutex
	readers, writers int
	maxReaders       int
	highest          int64
	violations       []string
}

func (r *resource) enter(write bool, token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if write {
		r.writers++
		if token <= r.highest {
			r.violations = append(r.violations, fmt.Sprintf("write token %d after %d", token, r.highest))
		}
		r.highest = token
	} else {
		r.readers++
		r.maxReaders = max(r.maxReaders, r.readers)
	}
	if r.writers > 1 || (r.writers == 1 && r.readers > 0) {
		r.violations = append(r.violations, fmt.Sprintf("%d writers with %d readers", r.writers, r.readers))
	}
}

func (r *resource) leave(write bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if write {
		r.writers--
	} else {
		r.readers--
	}
}

func TestReadersShareWritersExclude(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const sessions, perSession, rounds = 4, 6, 4
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		dir := recipetest.LockDir(t, admin)
		var res resource
		var wg sync.WaitGroup
		for s := range sessions {
			c := b.Connect(t)
			for g := range perSession {
				write := g%3 == 0
				wg.Add(1)
				go func() {
					defer wg.Done()
					rw := rwlock.New(c, dir)
					for range rounds {
						acquire := rw.RLock
						if write {
							acquire = rw.Lock
						}
						lease, err := acquire(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						res.enter(write, lease.Token())
						if !write {
							time.Sleep(time.Millisecond) // let readers overlap
						}
						res.leave(write)
						if err := lease.Unlock(ctx); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			_ = s
		}
		wg.Wait()
		if len(res.violations) > 0 {
			t.Fatalf("exclusion violated: %v", res.violations[:min(5, len(res.violations))])
		}
		recipetest.WaitChildren(t, admin, dir, 0)
	})
}

func TestReadersHoldTogether(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		r1, err := rwlock.New(c, dir).TryRLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := rwlock.New(b.Connect(t), dir).TryRLock(ctx)
		if err != nil {
			t.Fatalf("second reader: %v", err)
		}
		if _, err := rwlock.New(b.Connect(t), dir).TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
			t.Fatalf("writer while readers hold: %v, want ErrLocked", err)
		}
		r1.Unlock(ctx)
		r2.Unlock(ctx)
		w, err := rwlock.New(c, dir).TryLock(ctx)
		if err != nil {
			t.Fatalf("writer on a free lock: %v", err)
		}
		if _, err := rwlock.New(b.Connect(t), dir).TryRLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
			t.Fatalf("reader while a writer holds: %v, want ErrLocked", err)
		}
		w.Unlock(ctx)
		recipetest.WaitChildren(t, c, dir, 0)
	})
}

// W1 holds, R2 and W3 wait in that order. R2 must wait for W1 only (not
// for the higher W3, kazoo's deadlock), and W3 for R2; a reader R4 that
// comes after W3 must not overtake it.
func TestReaderWaitsForNearestLowerWriter(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		w1, err := rwlock.New(c, dir).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		type got struct {
			name  string
			lease *rwlock.Lease
		}
		acquired := make(chan got, 3)
		start := func(name string, write bool) {
			rw := rwlock.New(b.Connect(t), dir)
			go func() {
				acquire := rw.RLock
				if write {
					acquire = rw.Lock
				}
				l, err := acquire(ctx)
				if err != nil {
					t.Error(err)
				}
				acquired <- got{name, l}
			}()
		}
		start("R2", false)
		recipetest.WaitChildren(t, c, dir, 2)
		start("W3", true)
		recipetest.WaitChildren(t, c, dir, 3)
		start("R4", false)
		recipetest.WaitChildren(t, c, dir, 4)
		w1.Unlock(ctx)
		first := <-acquired
		if first.name != "R2" {
			t.Fatalf("after W1 released, %s acquired first, want R2", first.name)
		}
		select {
		case g := <-acquired:
			t.Fatalf("%s acquired while R2 held the read lock ahead of W3", g.name)
		case <-time.After(zktest.Scale(100 * time.Millisecond)):
		}
		first.lease.Unlock(ctx)
		second := <-acquired
		if second.name != "W3" {
			t.Fatalf("after R2 released, %s acquired, want W3", second.name)
		}
		second.lease.Unlock(ctx)
		third := <-acquired
		if third.name != "R4" || third.lease == nil {
			t.Fatalf("then %s, want R4", third.name)
		}
		third.lease.Unlock(ctx)
	})
}

func TestUpgradeIsAnError(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		rw := rwlock.New(c, dir)
		r, err := rw.RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, zktest.Scale(10*time.Second))
		defer cancel()
		_, err = rw.Lock(wctx)
		if !errors.Is(err, rwlock.ErrUpgrade) {
			t.Fatalf("Lock while holding a read lease: %v, want ErrUpgrade", err)
		}
		recipetest.NamesPath(t, "Lock while holding a read lease", err, "write lock", dir)
		_, err = rw.TryLock(wctx)
		if !errors.Is(err, rwlock.ErrUpgrade) {
			t.Fatalf("TryLock while holding a read lease: %v, want ErrUpgrade", err)
		}
		recipetest.NamesPath(t, "TryLock while holding a read lease", err, "try write lock", dir)
		if got := recipetest.Children(t, c, dir); len(got) != 1 {
			t.Fatalf("nodes after a refused upgrade: %v", got)
		}
		r.Unlock(ctx)
		w, err := rw.Lock(wctx)
		if err != nil {
			t.Fatalf("Lock after the read lease ended: %v", err)
		}
		w.Unlock(ctx)
	})
}

// A participant holding the write lock cannot take the read lock as well:
// a writer queued behind it would then hold together with that reader.
func TestNoDowngrade(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		rw := rwlock.New(c, dir)
		w, err := rw.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = rw.RLock(ctx)
		if !errors.Is(err, rwlock.ErrDowngrade) {
			t.Fatalf("RLock while holding the write lock: %v, want ErrDowngrade", err)
		}
		recipetest.NamesPath(t, "RLock while holding the write lock", err, "read lock", dir)
		_, err = rw.TryRLock(ctx)
		if !errors.Is(err, rwlock.ErrDowngrade) {
			t.Fatalf("TryRLock while holding the write lock: %v, want ErrDowngrade", err)
		}
		recipetest.NamesPath(t, "TryRLock while holding the write lock", err, "try read lock", dir)
		if got := recipetest.Children(t, c, dir); len(got) != 1 {
			t.Fatalf("nodes after a refused downgrade: %v", got)
		}
		w.Unlock(ctx)
		r, err := rw.RLock(ctx)
		if err != nil {
			t.Fatalf("RLock after the write lease ended: %v", err)
		}
		r.Unlock(ctx)
	})
}
