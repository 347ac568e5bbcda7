package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
)

// multiLockTransfers: every worker moves one unit between two of three
// accounts at a time, taking both accounts' locks together with
// lock.NewMulti (each worker names them in its own order) and writing both
// balances in one Multi fenced by both locks. The sum of the balances never
// changes, and no two transfers ever deadlock.
func multiLockTransfers(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	const accounts, opening = 3, 1000
	balance := func(i int) string { return d.path(fmt.Sprintf("accounts/a%d", i)) }
	lockOf := func(i int) string { return d.path(fmt.Sprintf("account-locks/a%d", i)) }
	if err := cs[0].EnsurePath(ctx, d.path("accounts")); err != nil {
		return "", err
	}
	for i := range accounts {
		if _, err := cs[0].Create(ctx, balance(i), binary.BigEndian.AppendUint64(nil, opening), client.Persistent); err != nil {
			return "", err
		}
	}
	start := time.Now()
	errc := make(chan error, len(cs))
	for w, c := range cs {
		go func() {
			for r := range d.rounds {
				from, to := (w+r)%accounts, (w+r+1)%accounts
				if w%2 == 1 {
					from, to = to, from // the other order: NewMulti takes them sorted
				}
				if err := transfer(ctx, c, lockOf(from), lockOf(to), balance(from), balance(to)); err != nil {
					errc <- err
					return
				}
				d.count(1)
			}
			errc <- nil
		}()
	}
	for range cs {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	elapsed := time.Since(start)
	sum := uint64(0)
	for i := range accounts {
		data, _, err := cs[0].Get(ctx, balance(i))
		if err != nil {
			return "", err
		}
		sum += binary.BigEndian.Uint64(data)
	}
	if sum != accounts*opening {
		return "", violationf("the accounts hold %d after the transfers, want %d", sum, accounts*opening)
	}
	total := d.workers * d.rounds
	return fmt.Sprintf("%d transfers, %.0f/s, sum kept at %d", total, float64(total)/elapsed.Seconds(), sum), nil
}

// transfer moves one unit from one balance to the other under both locks.
func transfer(ctx context.Context, c *client.Client, lockA, lockB, from, to string) error {
	both, err := lock.NewMulti(c, []string{lockA, lockB}).Lock(ctx)
	if err != nil {
		return err
	}
	defer both.Unlock(ctx)
	a, sa, err := c.Get(ctx, from)
	if err != nil {
		return err
	}
	b, sb, err := c.Get(ctx, to)
	if err != nil {
		return err
	}
	_, err = both.Multi(ctx,
		client.SetOp(from, binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(a)-1), sa.Version),
		client.SetOp(to, binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(b)+1), sb.Version))
	if err != nil {
		return violationf("a transfer under both locks failed: %v", err)
	}
	return nil
}
