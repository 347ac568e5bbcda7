package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// The tree of W7_cache: 100 directories of 99 leaves, 10 000 nodes.
const cacheDirs, cacheLeaves = 100, 99

// BenchmarkCache is W7_cache: a tree cache on 10 000 nodes. It reports the
// time from Open to the first snapshot (load-ms), the servers' watches
// while it runs (wchs), the live heap the cache added per node
// (bytes/node), and, per op, the time from a writer's setData of a
// random leaf to the cache's changed event for that version (p50, p99),
// at 1 000 writes a second at most.
// The anchors' Java program runs the same workload on Curator's
// CuratorCache (BenchCurator --workloads W7).
func BenchmarkCache(b *testing.B) {
	for _, mode := range []string{"persistent", "oneshot"} {
		b.Run(mode, func(b *testing.B) {
			var opts []cache.Option
			if mode == "oneshot" {
				opts = append(opts, cache.WithOneShotWatches())
			}
			benchCache(b, opts...)
		})
	}
}

func benchCache(b *testing.B, opts ...cache.Option) {
	srv := servers(b)
	cs := connectN(b, srv, 2)
	ctx := context.Background()
	path := freshPath(b, cs[0], "w7")
	for d := range cacheDirs {
		dir := fmt.Sprintf("%s/d%d", path, d)
		ops := []client.Op{client.CreateOp(dir, nil, client.Persistent)}
		for l := range cacheLeaves {
			ops = append(ops, client.CreateOp(fmt.Sprintf("%s/l%d", dir, l), make([]byte, 16), client.Persistent))
		}
		if _, err := cs[0].Multi(ctx, ops...); err != nil {
			b.Fatal(err)
		}
	}
	heap0 := heapInUse()
	start := time.Now()
	tree, err := cache.OpenTree(ctx, cs[1], path, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer tree.Close()
	load := time.Since(start)
	perNode := float64(heapInUse()-heap0) / float64(tree.Snapshot().Len())
	watches := serverWatches(b, srv)
	events := tree.Events()
	for ev := range events {
		if ev.Type == cache.Initialized {
			break
		}
	}
	rnd := rand.New(rand.NewPCG(7, 7))
	lats := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	next := time.Now()
	for range b.N {
		// One write a millisecond at most (1 000 writes/s), as the
		// anchors' program does.
		next = later(next.Add(time.Millisecond), time.Now())
		time.Sleep(time.Until(next))
		leaf := fmt.Sprintf("%s/d%d/l%d", path, rnd.IntN(cacheDirs), rnd.IntN(cacheLeaves))
		t0 := time.Now()
		st, err := cs[0].Set(ctx, leaf, make([]byte, 16), -1)
		if err != nil {
			b.Fatal(err)
		}
		for ev := range events {
			if ev.Path == leaf && ev.Stat.Version >= st.Version {
				break
			}
		}
		lats = append(lats, time.Since(t0))
	}
	b.StopTimer()
	sortDurations(lats)
	b.ReportMetric(float64(load)/float64(time.Millisecond), "load-ms")
	b.ReportMetric(float64(tree.Snapshot().Len()), "nodes")
	b.ReportMetric(float64(watches), "watches")
	b.ReportMetric(perNode, "bytes/node")
	b.ReportMetric(percentile(lats, 0.50), "p50-ms")
	b.ReportMetric(percentile(lats, 0.99), "p99-ms")
}

// serverWatches sums the servers' "Total watches" (wchs).
func serverWatches(b *testing.B, srv []string) int64 {
	var total int64
	for _, s := range srv {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err := zktest.FourLetterWord(ctx, s, "wchs")
		cancel()
		if err != nil {
			b.Fatalf("wchs %s: %v", s, err)
		}
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "Total watches:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				total += n
			}
		}
	}
	return total
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
