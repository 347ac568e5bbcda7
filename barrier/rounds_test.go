package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// roundsEnv sets how many rounds TestEnsembleRounds runs. The default
// keeps the test within CI's time budget; the acceptance run is
// ZKIT_BARRIER_ROUNDS=1000 (about a minute with -race on 2 loaded cores).
const roundsEnv = "ZKIT_BARRIER_ROUNDS"

// The workload that hangs kazoo's and Curator's double barriers: 8
// members, round after round, on a 3-node ensemble (3 JVMs and the
// members sharing the machine's cores, so that some member is always
// late). Every round completes; no Enter returns before all 8 have called
// Enter, no Leave before all 8 have called Leave. Three rounds in four
// follow each other on one path (a straggler of one round must not take
// the next one's members for its own), the fourth takes a fresh path (as
// Curator's barrier needs).
func TestEnsembleRounds(t *testing.T) {
	rounds := 100
	if s := os.Getenv(roundsEnv); s != "" {
		var err error
		if rounds, err = strconv.Atoi(s); err != nil || rounds < 1 {
			t.Fatalf("%s=%q: want a positive number", roundsEnv, s)
		}
	}
	const n = 8
	z := zktest.StartEnsemble(t, 3)
	b := zktest.Backend{Name: "ensemble", Servers: z.Servers()}
	admin := b.Connect(t)
	base := barrierPath(t, admin)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	var (
		entering = make([]atomic.Int32, rounds)
		leaving  = make([]atomic.Int32, rounds)
		done     = make([]atomic.Int32, n) // rounds completed, per member
		failOnce sync.Once
		failure  error
	)
	fail := func(err error) {
		failOnce.Do(func() { failure = err; stop() })
	}
	// step runs one Enter or Leave, and names a hang as one.
	step := func(i, k int, what string, f func(context.Context) error) bool {
		sctx, cancel := context.WithTimeout(ctx, zktest.Scale(60*time.Second))
		defer cancel()
		err := f(sctx)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			fail(fmt.Errorf("member %d hung in %s of round %d", i, what, k))
		case err != nil && ctx.Err() == nil:
			fail(fmt.Errorf("member %d, round %d, %s: %w", i, k, what, err))
		}
		return err == nil
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		c := b.Connect(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range rounds {
				path := base + "/shared"
				if k%4 == 3 {
					path = fmt.Sprintf("%s/r%d", base, k)
				}
				d := barrier.NewDouble(c, path, n)
				entering[k].Add(1)
				if !step(i, k, "Enter", d.Enter) {
					return
				}
				if got := entering[k].Load(); got != n {
					fail(fmt.Errorf("member %d entered round %d while %d of %d had called Enter", i, k, got, n))
					return
				}
				leaving[k].Add(1)
				if !step(i, k, "Leave", d.Leave) {
					return
				}
				if got := leaving[k].Load(); got != n {
					fail(fmt.Errorf("member %d left round %d while %d of %d had called Leave", i, k, got, n))
					return
				}
				done[i].Add(1)
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		progress := make([]int32, n)
		for i := range done {
			progress[i] = done[i].Load()
		}
		t.Fatalf("%v (rounds completed per member: %v)", failure, progress)
	}
	elapsed := time.Since(start)
	t.Logf("%d rounds of %d members in %v (%.0f rounds/s)", rounds, n, elapsed.Round(time.Millisecond), float64(rounds)/elapsed.Seconds())
}

// Rounds back to back on one path, on both servers: members of the next
// round arrive while the last of the previous one are still leaving.
func TestRoundsOnOnePath(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const n, rounds = 4, 150
		ctx := recipetest.Context(t)
		path := barrierPath(t, b.Connect(t))
		errs := make(chan error, n)
		for i := range n {
			d := barrier.NewDouble(b.Connect(t), path, n)
			go func() {
				for k := range rounds {
					if err := d.Enter(ctx); err != nil {
						errs <- fmt.Errorf("member %d, round %d, Enter: %w", i, k, err)
						return
					}
					if err := d.Leave(ctx); err != nil {
						errs <- fmt.Errorf("member %d, round %d, Leave: %w", i, k, err)
						return
					}
				}
				errs <- nil
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	})
}
