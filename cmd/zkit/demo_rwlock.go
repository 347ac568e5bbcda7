package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/rwlock"
)

// rwlockContention: half the workers read, half write. A writer is always
// alone; readers only ever overlap other readers. Then, the lock idle, the
// claims are checked where timing cannot hide them (readersShare): the
// readers take the read lock together, each at once (TryRLock), while a
// writer is refused; and a reader is refused beside a writer.
func rwlockContention(ctx context.Context, d *demoEnv) (string, error) {
	return rwlockRun(ctx, d, func(c *client.Client, path string) rwLocker { return rwlock.New(c, path) })
}

// rwLocker is a read/write lock as the rwlock step uses it: an
// *rwlock.RWLock, or a test's broken on purpose.
type rwLocker interface {
	RLock(ctx context.Context) (*rwlock.Lease, error)
	TryRLock(ctx context.Context) (*rwlock.Lease, error)
	Lock(ctx context.Context) (*rwlock.Lease, error)
	TryLock(ctx context.Context) (*rwlock.Lease, error)
}

// rwlockRun is rwlockContention on the locks newRW returns.
func rwlockRun(ctx context.Context, d *demoEnv, newRW func(c *client.Client, path string) rwLocker) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	path := d.path("rwlock")
	var readers, writers, maxReaders atomic.Int32
	var f fence // writers' tokens only ever grow
	errc := make(chan error, len(cs))
	for i, c := range cs {
		write := i%2 == 0
		go func() {
			rw := newRW(c, path)
			for range d.rounds {
				var lease *rwlock.Lease
				var err error
				if write {
					lease, err = rw.Lock(ctx)
				} else {
					lease, err = rw.RLock(ctx)
				}
				if err != nil {
					errc <- err
					return
				}
				d.count(1)
				if write {
					f.enter(lease.Token())
					if w, r := writers.Add(1), readers.Load(); w != 1 || r != 0 {
						f.violate("writer with %d writers and %d readers inside", w, r)
					}
					writers.Add(-1)
					f.leave()
				} else {
					r := readers.Add(1)
					for m := maxReaders.Load(); r > m && !maxReaders.CompareAndSwap(m, r); m = maxReaders.Load() {
					}
					if w := writers.Load(); w != 0 {
						f.violate("reader with %d writers inside", w)
					}
					time.Sleep(time.Millisecond) // hold a moment: readers overlap
					if w := writers.Load(); w != 0 {
						f.violate("reader with %d writers inside", w)
					}
					readers.Add(-1)
				}
				if err := lease.Unlock(ctx); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for range cs {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	if err := f.err(); err != nil {
		return "", err
	}
	// Every worker a reader (at least two), and a writer of its own: an
	// RWLock value is one participant.
	var all []rwLocker
	for _, c := range cs {
		all = append(all, newRW(c, path))
	}
	together, err := readersShare(ctx, newRW(cs[0], path), all)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d acquisitions, writers alone, up to %d readers at once; then %d readers together with a writer refused, a writer with a reader refused",
		d.workers*d.rounds, maxReaders.Load(), together), nil
}

// readersShare checks the rwlock's claims on an idle lock, where no
// timing can hide them: every one of readers takes the read lock at once
// (TryRLock) while the others hold it, a writer's TryLock is refused
// while they do, and once the writer holds the lock a reader's TryRLock
// is refused. It returns how many readers held the lock together.
func readersShare(ctx context.Context, writer rwLocker, readers []rwLocker) (int, error) {
	var held []*rwlock.Lease
	release := func() error {
		var first error
		for _, l := range held {
			if err := l.Unlock(ctx); err != nil && first == nil {
				first = err
			}
		}
		held = nil
		return first
	}
	defer release()
	for i, r := range readers {
		l, err := r.TryRLock(ctx)
		if errors.Is(err, rwlock.ErrLocked) {
			return 0, violationf("a reader refused the read lock while only readers held it (%d of them)", i)
		}
		if err != nil {
			return 0, err
		}
		held = append(held, l)
	}
	together := len(held)
	if l, err := writer.TryLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
		if err == nil {
			l.Unlock(ctx)
		}
		return 0, violationf("a writer's TryLock beside %d readers: %v, want ErrLocked", together, err)
	}
	if err := release(); err != nil {
		return 0, err
	}
	w, err := writer.TryLock(ctx)
	if err != nil {
		return 0, fmt.Errorf("a writer's TryLock on the idle lock: %w", err)
	}
	held = append(held, w)
	if l, err := readers[0].TryRLock(ctx); !errors.Is(err, rwlock.ErrLocked) {
		if err == nil {
			l.Unlock(ctx)
		}
		return 0, violationf("a reader's TryRLock beside a writer: %v, want ErrLocked", err)
	}
	return together, release()
}

// rwlockUpgrade: asking for the write lock while holding the read lock of
// the same participant is an error at once, not a deadlock.
func rwlockUpgrade(ctx context.Context, d *demoEnv) (string, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	rw := rwlock.New(c, d.path("upgrade"))
	r, err := rw.RLock(ctx)
	if err != nil {
		return "", err
	}
	defer r.Unlock(ctx)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := rw.Lock(wctx); !errors.Is(err, rwlock.ErrUpgrade) {
		return "", violationf("upgrade returned %v, want rwlock.ErrUpgrade", err)
	}
	return "ErrUpgrade returned at once", nil
}
