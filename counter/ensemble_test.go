package counter_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// LongEnv=1 runs TestEnsembleLeaderKilled at the full size (32
// sessions × 1000 increments, and 1000 increments each for Curator and
// zkit), which takes minutes; by default it runs 32 × 40 to stay within
// the suite's time budget.
const LongEnv = "ZKIT_COUNTER_LONG"

// 32 sessions increment one counter on a 3-node ensemble while its leader
// is killed and restarted: the final value lies between the acknowledged
// increments and those plus the ones reported unknown, and no two Adds
// return the same value. Then Curator's DistributedAtomicLong and zkit
// count together to the exact total on the same ensemble.
func TestEnsembleLeaderKilled(t *testing.T) {
	const sessions = 32
	each, mixed := 40, 100 // increments per session; per Curator thread and zkit session
	if os.Getenv(LongEnv) == "1" {
		each, mixed = 1000, 250
	}
	zk := zktest.StartEnsemble(t, 3)
	servers := zk.Servers()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(time.Duration(each+mixed)*time.Second))
	defer cancel()
	connect := func() *client.Client {
		c, err := client.Connect(ctx, servers, client.WithSessionTimeout(zktest.Scale(10*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	path := counterPath(t)
	var ty tally
	var done sync.WaitGroup
	var progress sync.WaitGroup // each session's first tenth
	progress.Add(sessions)
	for range sessions {
		k := counter.New(connect(), path)
		done.Add(1)
		go func() {
			defer done.Done()
			for i := range each {
				if i == each/10 {
					progress.Done()
				}
				cctx, cancel := context.WithTimeout(ctx, zktest.Scale(20*time.Second))
				ty.add(k.Add(cctx, 1))
				cancel()
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	progress.Wait()
	leader, err := zk.Leader()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killing leader %d after %d acknowledged increments", leader, ty.count())
	zk.Kill(leader)
	time.Sleep(zktest.Scale(time.Second))
	zk.Restart(leader)
	done.Wait()
	if ctx.Err() != nil {
		t.Fatalf("did not finish in time: %d acknowledged", ty.count())
	}
	k := counter.New(connect(), path)
	final, err := k.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ty.other {
		t.Errorf("Add failed: %v", e)
	}
	ty.check(t, final)

	// Curator DistributedAtomicLong and zkit on the same ensemble.
	peer := recipetest.StartCuratorCounter(t, servers)
	peer.Send("increments %s 4 %d", path, mixed)
	var wg sync.WaitGroup
	for range 4 {
		kc := counter.New(connect(), path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range mixed {
				if _, err := kc.Add(ctx, 1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	peer.Expect(fmt.Sprintf("incremented %d", 4*mixed))
	if v, err := k.Get(ctx); err != nil || v != final+8*int64(mixed) {
		t.Fatalf("after Curator's and zkit's %d increments each: %d, %v; want %d", 4*mixed, v, err, final+8*int64(mixed))
	}
}

// waitCount waits until at least n increments were acknowledged.
func (ty *tally) waitCount(t *testing.T, n int64) {
	t.Helper()
	recipetest.Eventually(t, fmt.Sprintf("%d increments acknowledged", n), func() bool { return ty.count() >= n })
}

func (ty *tally) count() int64 {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	return ty.acked
}
