package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/semaphore"
)

// semaphoreContention: workers contend for a semaphore of half as many
// leases. Each holder puts a marker node in a shared directory with a
// write fenced by its lease and counts the markers there: neither that
// count nor the holders counted in-process ever exceed the maximum.
func semaphoreContention(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	n := max(1, d.workers/2)
	path, inside := d.path("semaphore"), d.path("semaphore-holders")
	if err := cs[0].EnsurePath(ctx, inside); err != nil {
		return "", err
	}
	h := &semHolders{max: n}
	d.startClock()
	errc := make(chan error, len(cs))
	for _, c := range cs {
		go func() { errc <- semaphoreWorker(ctx, d, c, path, inside, n, h) }()
	}
	for range cs {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	elapsed := d.stopClock()
	if err := h.err(); err != nil {
		return "", err
	}
	for _, dir := range []string{path + "/leases", path + "/locks", inside} {
		if kids, _, err := cs[0].Children(ctx, dir); err != nil || len(kids) != 0 {
			return "", violationf("nodes left behind in %s: %v (%v)", dir, kids, err)
		}
	}
	total := d.workers * d.rounds
	return fmt.Sprintf("%d leases, %.0f/s, at most %d of %d held at once", total,
		float64(total)/elapsed.Seconds(), h.most, n), nil
}

func semaphoreWorker(ctx context.Context, d *demoEnv, c *client.Client, path, inside string, n int, h *semHolders) error {
	sem := semaphore.New(c, path, n)
	for range d.rounds {
		lease, err := sem.Acquire(ctx)
		if err != nil {
			return err
		}
		d.count(1)
		h.enter()
		res, err := lease.Multi(ctx, client.CreateOp(inside+"/h-", nil, client.EphemeralSequential))
		if err == nil {
			var kids []string
			if kids, _, err = c.Children(ctx, inside); err == nil {
				h.saw(len(kids))
				err = c.Delete(ctx, res[0].Path, -1)
			}
		}
		h.leave()
		if uerr := lease.Unlock(ctx); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// semHolders counts the holders of a semaphore, in-process and as the
// holders' marker nodes showed them.
type semHolders struct {
	mu         sync.Mutex
	max        int
	inside     int
	most       int
	violations []string
}

func (h *semHolders) enter() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inside++
	h.saw0(h.inside, "holding")
}

func (h *semHolders) leave() {
	h.mu.Lock()
	h.inside--
	h.mu.Unlock()
}

// saw records a count of marker nodes.
func (h *semHolders) saw(markers int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.saw0(markers, "marker nodes")
}

func (h *semHolders) saw0(n int, what string) {
	h.most = max(h.most, n)
	if n > h.max {
		h.violations = append(h.violations, fmt.Sprintf("%d %s at once, max %d", n, what, h.max))
	}
}

func (h *semHolders) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.violations) == 0 {
		return nil
	}
	return violationf("%d violations, first: %s", len(h.violations), h.violations[0])
}
