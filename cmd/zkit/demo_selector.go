package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/election"
)

// leaderSelector: every worker runs election.Run (Curator's LeaderSelector
// with autoRequeue); each term's lead function gives the term up after a
// short stint, and the candidate campaigns again. Lead functions never run
// two at a time, and every candidate leads within four times as many terms
// as there are candidates times rounds/10.
func leaderSelector(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	path := d.path("selector")
	want := d.workers * max(1, d.rounds/10)
	var (
		leading, most atomic.Int64
		terms         atomic.Int64
		mu            sync.Mutex
		led           = map[string]int{}
	)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	start := time.Now()
	errc := make(chan error, len(cs))
	for w, c := range cs {
		id := fmt.Sprintf("worker-%d", w)
		e := election.New(c, path, id, election.WithRequeuePause(time.Millisecond))
		go func() {
			errc <- e.Run(ctx, func(ctx context.Context, term *election.Term) error {
				n := leading.Add(1)
				defer leading.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				mu.Lock()
				led[id]++
				all := len(led) == len(cs)
				mu.Unlock()
				d.count(1)
				// A candidate whose client connected late joins the
				// queue behind those that already led and requeued:
				// the step goes on until every one has led, for up to
				// four times the terms it wants.
				if t := terms.Add(1); t >= int64(want) && all || t >= int64(4*want) {
					stop()
				}
				select { // lead a moment, then give the term up and rejoin
				case <-ctx.Done():
				case <-time.After(time.Millisecond):
				}
				return nil
			})
		}()
	}
	for range cs {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	elapsed := time.Since(start)
	if m := most.Load(); m > 1 {
		return "", violationf("%d lead functions ran at once", m)
	}
	if len(led) != len(cs) {
		return "", violationf("%d of %d candidates led", len(led), len(cs))
	}
	n := terms.Load()
	return fmt.Sprintf("%d terms, %.0f/s, one lead at a time, all %d candidates led", n, float64(n)/elapsed.Seconds(), len(cs)), nil
}
