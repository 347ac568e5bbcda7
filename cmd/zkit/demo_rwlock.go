package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/rwlock"
)

// rwlockContention: half the workers read, half write. A writer is always
// alone; readers only ever overlap other readers.
func rwlockContention(ctx context.Context, d *demoEnv) (string, error) {
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
			rw := rwlock.New(c, path)
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
	return fmt.Sprintf("%d acquisitions, writers alone, up to %d readers at once", d.workers*d.rounds, maxReaders.Load()), nil
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
