package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rwlock"
)

var contenders = []int{1, 8, 32, 1000}

// maxSessions caps the sessions of one point: up to 64 contenders each have
// a session of their own (as in the anchors), beyond that they share 64.
const maxSessions = 64

// BenchmarkLock is the anchors' W1_lock: contenders loop acquire then
// release, with nothing in between. One op is one handoff.
func BenchmarkLock(b *testing.B) {
	for _, n := range contenders {
		b.Run(fmt.Sprintf("contenders=%d", n), func(b *testing.B) {
			benchHandoffs(b, n, "lock", func(c *client.Client, path string) locker { return lock.New(c, path) })
		})
	}
}

// BenchmarkRWLockWrite is the same loop on the write side of a read/write
// lock.
func BenchmarkRWLockWrite(b *testing.B) {
	for _, n := range contenders[:3] {
		b.Run(fmt.Sprintf("contenders=%d", n), func(b *testing.B) {
			benchHandoffs(b, n, "rwlock", func(c *client.Client, path string) locker { return rwlock.New(c, path) })
		})
	}
}

// locker is what both lock.Lock and rwlock.RWLock (for writing) offer.
type locker interface {
	Lock(context.Context) (*recipes.Lease, error)
}

func benchHandoffs(b *testing.B, n int, what string, newLock func(*client.Client, string) locker) {
	srv := servers(b)
	cs := connectN(b, srv, min(n, maxSessions))
	path := freshPath(b, cs[0], what)
	ctx := context.Background()

	var left atomic.Int64
	left.Store(int64(b.N))
	var mu sync.Mutex
	var lats []time.Duration
	var inside, violations atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		l := newLock(cs[i%len(cs)], path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 1024)
			<-start
			for left.Add(-1) >= 0 {
				t0 := time.Now()
				lease, err := l.Lock(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
				if inside.Add(1) != 1 {
					violations.Add(1)
				}
				inside.Add(-1)
				if err := lease.Unlock(ctx); err != nil {
					b.Error(err)
					return
				}
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		}()
	}
	rx0, tx0 := packets(b, srv)
	srv0, self0 := cpuSeconds()
	b.ResetTimer()
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	b.StopTimer()
	srv1, self1 := cpuSeconds()
	rx1, tx1 := packets(b, srv)
	if v := violations.Load(); v > 0 {
		b.Fatalf("%d mutual exclusion violations", v)
	}
	sortDurations(lats)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "handoffs/s")
	b.ReportMetric(percentile(lats, 0.50), "p50-ms")
	b.ReportMetric(percentile(lats, 0.99), "p99-ms")
	b.ReportMetric(float64(rx1-rx0)/float64(b.N), "rx-pkts/handoff")
	b.ReportMetric(float64(tx1-tx0)/float64(b.N), "tx-pkts/handoff")
	b.ReportMetric(100*(self1-self0)/elapsed.Seconds(), "client-cpu-%")
	if srv1 > 0 {
		b.ReportMetric(100*(srv1-srv0)/elapsed.Seconds(), "server-cpu-%")
	}
}
