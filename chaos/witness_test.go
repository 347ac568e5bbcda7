package chaos

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// witness writes beside the recipes with nothing but plain creates, and
// keeps the name of every create the server acknowledged. If one of those
// nodes is missing afterwards, ZooKeeper lost an acknowledged write: no
// recipe built on it can be judged by what it read during that run.
type witness struct {
	c     *client.Client
	dir   string
	stop  context.CancelFunc
	wg    sync.WaitGroup
	mu    sync.Mutex
	acked []string
}

// startWitness starts two writers under a directory of their own.
func startWitness(t *testing.T, e *env) *witness {
	t.Helper()
	w := &witness{c: e.admin(t), dir: fmt.Sprintf("/chaos-witness-%d", time.Now().UnixNano())}
	ctx := testContext(t, time.Minute)
	if err := w.c.EnsurePath(ctx, w.dir); err != nil {
		t.Fatal(err)
	}
	ctx, w.stop = context.WithCancel(testContext(t, 10*time.Minute))
	for range 2 {
		w.wg.Go(func() {
			for ctx.Err() == nil {
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				p, err := w.c.Create(cctx, w.dir+"/w-", nil, client.PersistentSequential)
				cancel()
				if err == nil {
					w.mu.Lock()
					w.acked = append(w.acked, p)
					w.mu.Unlock()
				} else {
					time.Sleep(10 * time.Millisecond) // the connection is down: do not spin
				}
			}
		})
	}
	return w
}

// lost stops the writers and returns how many acknowledged creates are
// missing on any server (each read after a sync with the leader).
func (w *witness) lost(t *testing.T, e *env) (int, int) {
	t.Helper()
	w.stop()
	w.wg.Wait()
	ctx := testContext(t, time.Minute)
	missing := 0
	for _, srv := range e.z.Servers() {
		names, _, err := syncedChildren(ctx, srv, w.dir)
		if err != nil {
			t.Logf("witness: cannot read %s: %v", srv, err)
			continue
		}
		have := make(map[string]bool, len(names))
		for _, n := range names {
			have[w.dir+"/"+n] = true
		}
		m := 0
		for _, p := range w.acked {
			if !have[p] {
				m++
			}
		}
		missing = max(missing, m)
	}
	return missing, len(w.acked)
}
