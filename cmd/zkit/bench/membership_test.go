package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/membership"
)

// BenchmarkMembership: 1000 members join one group, from 10 sessions, while
// 10 watchers (each its own session) follow it with Group.Watch. One
// op is one join. It reports the time from the first join until every
// watcher's snapshot holds all 1000 members, and the server packets per
// join, the watchers' notifications and re-reads included.
func BenchmarkMembership(b *testing.B) {
	const members, joiners, watchers = 1000, 10, 10
	srv := servers(b)
	cs := connectN(b, srv, joiners+watchers)
	var converge, joined time.Duration
	var rx, tx int64
	b.ResetTimer()
	for round := 0; round*members < b.N || round == 0; round++ {
		b.StopTimer()
		path := freshPath(b, cs[0], "membership") + "/group"
		ctx, cancel := context.WithCancel(context.Background())
		full := make(chan struct{}, watchers)
		started := make(chan struct{}, watchers)
		for _, c := range cs[joiners:] {
			feed := membership.New(c, path).Watch(ctx)
			go func() {
				first := true
				for group := range feed.Values() {
					if first {
						started <- struct{}{}
						first = false
					}
					if len(group) == members {
						full <- struct{}{}
						return
					}
				}
			}()
		}
		for range watchers {
			<-started
		}
		rx0, tx0 := packets(b, srv)
		b.StartTimer()
		start := time.Now()
		all := joinAll(b, ctx, cs[:joiners], path, members)
		joined += time.Since(start)
		for range watchers {
			<-full
		}
		converge += time.Since(start)
		b.StopTimer()
		rx1, tx1 := packets(b, srv)
		rx, tx = rx+rx1-rx0, tx+tx1-tx0
		for _, m := range all {
			m.Leave(ctx)
		}
		cancel()
	}
	rounds := float64(max(b.N, members)) / members
	joins := rounds * members
	b.ReportMetric(float64(converge.Milliseconds())/rounds, "ms/converge")
	b.ReportMetric(joins/joined.Seconds(), "joins/s")
	b.ReportMetric(float64(rx)/joins, "rx-pkts/join")
	b.ReportMetric(float64(tx)/joins, "tx-pkts/join")
}

// joinAll joins n members to path, spread over the clients, and returns
// them.
func joinAll(b *testing.B, ctx context.Context, cs []*client.Client, path string, n int) []*membership.Member {
	var mu sync.Mutex
	var all []*membership.Member
	var wg sync.WaitGroup
	for j, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := membership.New(c, path)
			for i := j; i < n; i += len(cs) {
				m, err := g.Join(ctx, fmt.Sprintf("m%04d", i), []byte("10.0.0.1:8080"))
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				all = append(all, m)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	return all
}
