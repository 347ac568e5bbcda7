package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/zkit-dev/zkit/configwatch"
)

// configKeys is how many keys each demo publish writes, all to the same
// generation number: a snapshot with two different numbers is mixed.
const configKeys = 4

// configUpdates: one publisher rewrites a configuration of several keys
// with the ready flag, generation after generation, while the other
// workers watch it. Every snapshot they get is complete (all keys of one
// generation), and each ends on the last generation. The publisher lets
// the watchers catch up every few publishes, so that they see bursts and
// pauses alike.
func configUpdates(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	path := d.path("config")
	publisher := configwatch.New(cs[0], path, configwatch.Raw)
	publish := func(g int) (int64, error) {
		vals := configwatch.Values{}
		for k := range configKeys {
			vals[fmt.Sprintf("key%d", k)] = fmt.Appendf(nil, "%d", g)
		}
		return publisher.Set(ctx, vals)
	}
	if _, err := publish(0); err != nil {
		return "", err
	}
	var snapshots, mixed atomic.Int64
	watchers := cs[1:]
	seen := make([]atomic.Int64, len(watchers)) // each watcher's last snapshot's zxid
	errc := make(chan error, len(watchers))
	for i, c := range watchers {
		feed := configwatch.New(c, path, configwatch.JSON[map[string]int]).Watch(ctx)
		go func() {
			for s := range feed.Values() {
				snapshots.Add(1)
				d.count(1)
				g, ok := generation(s.Value)
				if !ok {
					mixed.Add(1)
				}
				seen[i].Store(s.Zxid)
				if g == d.rounds {
					errc <- nil
					return
				}
			}
			errc <- fmt.Errorf("watch ended before the last publish: %w", feed.Err())
		}()
	}
	caughtUp := func(zxid int64) bool {
		for i := range seen {
			if seen[i].Load() < zxid {
				return false
			}
		}
		return true
	}
	for g := 1; g <= d.rounds; g++ {
		zxid, err := publish(g)
		if err != nil {
			return "", err
		}
		d.count(1)
		if g%5 == 0 && g < d.rounds {
			if err := waitFor(ctx, func() bool { return caughtUp(zxid) }); err != nil {
				return "", violationf("watchers did not catch up with publish %d", g)
			}
		}
	}
	for range watchers {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	if m := mixed.Load(); m > 0 {
		return "", violationf("%d snapshots mixed two publishes", m)
	}
	return fmt.Sprintf("%d publishes of %d keys, %d snapshots to %d watchers, none mixed, all ended on the last",
		d.rounds, configKeys, snapshots.Load(), len(watchers)), nil
}

// generation is the publish number of a snapshot, and false if its keys
// are not all of one publish.
func generation(s map[string]int) (int, bool) {
	g := -1
	for _, v := range s {
		if g >= 0 && v != g {
			return 0, false
		}
		g = v
	}
	return g, len(s) == configKeys
}
