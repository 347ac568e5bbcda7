package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
)

// counterContention: every worker (its own session) runs four goroutines
// adding 1, all on one counter. The total is exact and no two Adds return
// the same value; goroutines of one session combine their increments into
// fewer writes.
func counterContention(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	path := d.path("counter")
	var mu sync.Mutex
	seen := map[int64]bool{}
	var dup []int64
	const perSession = 4
	errc := make(chan error, perSession*len(cs))
	for _, c := range cs {
		for range perSession {
			go func() {
				k := counter.New(c, path)
				for range d.rounds {
					v, err := k.Add(ctx, 1)
					if err != nil {
						errc <- err
						return
					}
					d.count(1)
					mu.Lock()
					if seen[v] {
						dup = append(dup, v)
					}
					seen[v] = true
					mu.Unlock()
				}
				errc <- nil
			}()
		}
	}
	for range perSession * len(cs) {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	if len(dup) > 0 {
		return "", violationf("Adds returned the same value: %v", dup)
	}
	want := int64(perSession * d.workers * d.rounds)
	got, writes, err := counterState(ctx, cs[0], path)
	if err != nil {
		return "", err
	}
	if got != want {
		return "", violationf("counter is %d after %d increments", got, want)
	}
	return fmt.Sprintf("%d increments in %d writes, exact total, all results distinct", want, writes), nil
}

// counterLostReply: the reply to a counter write is lost after the server
// applied it. The Adds combined into that write report an unknown outcome
// instead of retrying; each of them counted exactly once.
func counterLostReply(ctx context.Context, d *demoEnv) (string, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	path := d.path("counter-lost-reply")
	k := counter.New(c, path)
	if _, err := k.Add(ctx, 1); err != nil {
		return "", err
	}
	d.srv.DropReplyAfterCommit(func(op, p string) bool { return op == "setData" && p == path })
	var mu sync.Mutex
	acked, unknown := int64(1), int64(0)
	var wg sync.WaitGroup
	var other error
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				_, err := k.Add(ctx, 1)
				d.count(1)
				mu.Lock()
				switch {
				case err == nil:
					acked++
				case client.IsOutcomeUnknown(err):
					unknown++
				default:
					other = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if other != nil {
		return "", other
	}
	got, _, err := counterState(ctx, c, path)
	if err != nil {
		return "", err
	}
	if unknown == 0 {
		return "", violationf("the lost reply was not reported")
	}
	// The lost write was applied: its increments count once, not twice.
	if got != acked+unknown {
		return "", violationf("counter is %d: %d acknowledged + %d unknown (applied once) = %d", got, acked, unknown, acked+unknown)
	}
	return fmt.Sprintf("%d of %d Adds reported outcome unknown, each counted once (total %d)", unknown, acked+unknown-1, got), nil
}

// counterState is the counter's value and the number of writes it took
// (its node's version + 1).
func counterState(ctx context.Context, c *client.Client, path string) (value int64, writes int32, err error) {
	v, err := counter.New(c, path).Get(ctx)
	if err != nil {
		return 0, 0, err
	}
	_, st, err := c.Get(ctx, path)
	if err != nil {
		return 0, 0, err
	}
	return v, st.Version + 1, nil
}
