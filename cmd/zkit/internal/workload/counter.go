package workload

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
)

// Counter is W2_counter on zkit's counter: each client (its own session)
// loops Add(1). One operation is one increment; its latency covers the
// whole Add, retries included. The check: the final value equals the
// increments counted, and no two Adds returned the same value.
func Counter() Spec {
	return Spec{Workload: "W2_counter", Impl: "zkit.Counter", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		cs, path, closeAll, err := connectAt(ctx, p, "counter")
		if err != nil {
			return nil, err
		}
		return counterInstance(cs, path, p.Clients, closeAll), nil
	}}
}

// SharedCounter is W2_counter with every client a goroutine of one
// session: zkit combines their pending increments into one write.
func SharedCounter() Spec {
	return Spec{Workload: "W2_counter_shared", Impl: "zkit.Counter", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		q := p
		q.Clients = 1
		cs, path, closeAll, err := connectAt(ctx, q, "counter")
		if err != nil {
			return nil, err
		}
		return counterInstance(cs, path, p.Clients, closeAll), nil
	}}
}

func counterInstance(cs []*client.Client, path string, n int, closeAll func()) *Instance {
	path += "/c"
	counters := make([]*counter.Counter, n)
	for i := range counters {
		counters[i] = counter.New(cs[i%len(cs)], path)
	}
	var seen distinct
	var done atomic.Int64
	return &Instance{
		Op: func(ctx context.Context, i int) (time.Duration, error) {
			t0 := time.Now()
			v, err := counters[i].Add(ctx, 1)
			if err != nil {
				return 0, err
			}
			lat := time.Since(t0)
			done.Add(1)
			seen.add(v)
			return lat, nil
		},
		Check: func(ctx context.Context) []string {
			v, err := counters[0].Get(ctx)
			check := "ok"
			if err != nil || v != done.Load() {
				check = fmt.Sprintf("MISMATCH (%v)", err)
			}
			var writes int32
			if _, st, err := cs[0].Get(ctx, path); err == nil {
				writes = st.Version + 1 // a write is a version
			}
			return []string{fmt.Sprintf("final=%d increments=%d %s writes=%d (%.2f increments per write)",
				v, done.Load(), check, writes, float64(done.Load())/float64(max(writes, 1))), seen.note()}
		},
		Close: closeAll,
	}
}

// distinct checks that no value is returned twice.
type distinct struct {
	mu   sync.Mutex
	seen map[int64]bool
	dups int
}

func (d *distinct) add(v int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = map[int64]bool{}
	}
	if d.seen[v] {
		d.dups++
	}
	d.seen[v] = true
}

func (d *distinct) note() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dups > 0 {
		return fmt.Sprintf("distinct_results=VIOLATED (%d duplicates)", d.dups)
	}
	return "distinct_results=ok"
}
