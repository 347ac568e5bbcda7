package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/barrier"
)

// barrierRounds: the workers enter and leave a double barrier together,
// round after round on one path. Nobody gets through Enter before every
// worker has called it, and nobody out of Leave before every worker has
// called it.
func barrierRounds(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	n, path := d.workers, d.path("barrier")
	entering := make([]atomic.Int32, d.rounds)
	leaving := make([]atomic.Int32, d.rounds)
	var early atomic.Int64
	d.startClock()
	errc := make(chan error, n)
	for i, c := range cs {
		go func() {
			member := barrier.NewDouble(c, path, n)
			for k := range d.rounds {
				entering[k].Add(1)
				if err := member.Enter(ctx); err != nil {
					stop()
					errc <- fmt.Errorf("round %d: %w", k, err)
					return
				}
				if entering[k].Load() != int32(n) {
					early.Add(1)
				}
				leaving[k].Add(1)
				if err := member.Leave(ctx); err != nil {
					stop()
					errc <- fmt.Errorf("round %d: %w", k, err)
					return
				}
				if leaving[k].Load() != int32(n) {
					early.Add(1)
				}
				if i == 0 {
					d.count(1)
				}
			}
			errc <- nil
		}()
	}
	var first error
	for range cs {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return "", first
	}
	elapsed := d.stopClock()
	if e := early.Load(); e > 0 {
		return "", violationf("%d passages before every worker had called Enter or Leave", e)
	}
	if kids, _, err := cs[0].Children(ctx, path); err != nil || len(kids) != 0 {
		return "", violationf("barrier nodes left behind: %v (%v)", kids, err)
	}
	return fmt.Sprintf("%d rounds of %d workers on one path, %.0f rounds/s, nobody through early, nobody out early",
		d.rounds, n, float64(d.rounds)/elapsed.Seconds()), nil
}

// barrierExpiry: a member's session expires inside the barrier. The others
// do not wait for it forever: Leave returns ErrMemberLost once every node
// is gone.
func barrierExpiry(ctx context.Context, d *demoEnv) (string, error) {
	const n = 3
	cs, closeAll, err := d.connectAll(ctx, n)
	if err != nil {
		return "", err
	}
	defer closeAll()
	path := d.path("barrier-expiry")
	members := make([]*barrier.Double, n)
	errc := make(chan error, n)
	for i, c := range cs {
		members[i] = barrier.NewDouble(c, path, n)
		go func() { errc <- members[i].Enter(ctx) }()
	}
	for range n {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	d.count(n)
	victim := cs[0].Session()
	if err := d.expire(ctx, victim); err != nil {
		return "", err
	}
	start := time.Now()
	for _, m := range members[1:] {
		go func() { errc <- m.Leave(ctx) }()
	}
	for range n - 1 {
		err := <-errc
		if ctx.Err() != nil {
			return "", violationf("a member waited in Leave for the expired one until the step's deadline")
		}
		if !errors.Is(err, barrier.ErrMemberLost) {
			return "", violationf("Leave returned %v, want ErrMemberLost", err)
		}
		d.count(1)
	}
	return fmt.Sprintf("the %d others left in %v, told: %q", n-1, time.Since(start).Round(time.Millisecond), barrier.ErrMemberLost.Error()), nil
}
