package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/membership"
)

// membershipChurn: workers join and leave a group (every other member
// leaves again), one worker's session expires half way, and watchers
// follow the group. Every watcher ends on the true group, which List
// confirms, and every member that stayed is present.
func membershipChurn(ctx context.Context, d *demoEnv) (string, error) {
	const watchers = 3
	cs, closeAll, err := d.connectAll(ctx, d.workers+watchers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	path := d.path("members")
	latest := make([]atomic.Pointer[[]membership.Entry], watchers)
	wctx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	for i, c := range cs[d.workers:] {
		feed := membership.New(c, path).Watch(wctx)
		go func() {
			for group := range feed.Values() {
				latest[i].Store(&group)
			}
		}()
	}

	var (
		mu     sync.Mutex
		stayed []*membership.Member
		joined atomic.Int64
	)
	expired := make(chan error, 1)
	errc := make(chan error, d.workers)
	for w, c := range cs[:d.workers] {
		go func() {
			g := membership.New(c, path)
			for r := range d.rounds {
				id := fmt.Sprintf("w%02d-%03d", w, r)
				m, err := g.Join(ctx, id, []byte(id))
				if err != nil {
					errc <- err
					return
				}
				d.count(1)
				if n := joined.Add(1); n == int64(d.workers*d.rounds/2) {
					expired <- d.expire(ctx, c.Session()) // half way: one session expires
				}
				if r%2 == 0 {
					if err := m.Leave(ctx); err != nil {
						errc <- err
						return
					}
					d.count(1)
					continue
				}
				mu.Lock()
				stayed = append(stayed, m)
				mu.Unlock()
			}
			errc <- nil
		}()
	}
	for range d.workers {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	if err := <-expired; err != nil {
		return "", err
	}
	defer func() {
		for _, m := range stayed {
			m.Leave(ctx)
		}
	}()

	var want []string
	for _, m := range stayed {
		want = append(want, m.ID())
	}
	slices.Sort(want)
	wantIDs := strings.Join(want, ",")
	deadline := time.Now().Add(30 * time.Second)
	for i := range latest {
		for {
			got := ""
			if s := latest[i].Load(); s != nil {
				got = entryIDs(*s)
			}
			if got == wantIDs {
				break
			}
			if time.Now().After(deadline) {
				return "", violationf("watcher %d ended on %d members, not the %d of the group", i, strings.Count(got, ",")+1, len(want))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	group, err := membership.New(cs[0], path).List(ctx)
	if err != nil {
		return "", err
	}
	if got := entryIDs(group); got != wantIDs {
		return "", violationf("List shows %d members, the group has %d", len(group), len(want))
	}
	for _, m := range stayed {
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		_, err := m.Present(pctx)
		cancel()
		if err != nil {
			return "", violationf("member %s not present: %v", m.ID(), err)
		}
	}
	return fmt.Sprintf("%d joins, %d leaves, a session expired; %d watchers on the %d members that stayed",
		d.workers*d.rounds, d.workers*d.rounds-len(want), watchers, len(want)), nil
}

func entryIDs(group []membership.Entry) string {
	ids := make([]string, len(group))
	for i, m := range group {
		ids[i] = m.ID
	}
	return strings.Join(ids, ",")
}
