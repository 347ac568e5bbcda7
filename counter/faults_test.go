package counter_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// tally counts the outcomes of Adds of 1 and checks the final value
// against them: at least every acknowledged increment, at most those plus
// the ones reported unknown, and no value returned twice.
type tally struct {
	mu      sync.Mutex
	acked   int64
	unknown int64
	seen    map[int64]bool
	dups    []int64
	other   []error
}

func (ty *tally) add(v int64, err error) {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	switch {
	case err == nil:
		ty.acked++
		if ty.seen == nil {
			ty.seen = map[int64]bool{}
		}
		if ty.seen[v] {
			ty.dups = append(ty.dups, v)
		}
		ty.seen[v] = true
	case client.IsOutcomeUnknown(err):
		ty.unknown++
	default:
		ty.other = append(ty.other, err)
	}
}

func (ty *tally) check(t *testing.T, final int64) {
	t.Helper()
	ty.mu.Lock()
	defer ty.mu.Unlock()
	if len(ty.dups) > 0 {
		t.Errorf("values returned twice: %v", ty.dups)
	}
	if final < ty.acked || final > ty.acked+ty.unknown {
		t.Errorf("final value %d, want between %d acknowledged and %d (+%d unknown)", final, ty.acked, ty.acked+ty.unknown, ty.unknown)
	}
	t.Logf("final %d: %d acknowledged, %d unknown, %d other errors", final, ty.acked, ty.unknown, len(ty.other))
}

// A write applied but whose reply is lost is reported as unknown to every
// call combined into it, and not retried: each of those increments counts
// exactly once.
func TestLostReplyApplied(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	c := b.Connect(t)
	path := counterPath(t)
	k := counter.New(c, path)
	if _, err := k.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b.Reference().DropReplyAfterCommit(func(op, p string) bool { return op == "setData" && p == path })
	var ty tally
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				ty.add(k.Add(ctx, 1))
			}
		}()
	}
	wg.Wait()
	v, err := counter.New(b.Connect(t), path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ty.unknown == 0 {
		t.Fatal("no Add reported the lost reply")
	}
	if len(ty.other) > 0 {
		t.Fatalf("errors other than outcome unknown: %v", ty.other)
	}
	// The lost write was applied: every unknown increment counted once.
	if want := 1 + ty.acked + ty.unknown; v != want {
		t.Fatalf("counter = %d, want %d (%d acknowledged + %d unknown, applied once)", v, want, ty.acked, ty.unknown)
	}
	ty.check(t, v-1)
}

// A write whose reply is lost, but which another writer's change proves
// was not applied, is retried: Add succeeds.
func TestLostReplyResolved(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	c := b.Connect(t)
	path := counterPath(t)
	k := counter.New(c, path)
	if _, err := k.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Another client moves the counter on; k does not know. k's next write
	// (from its stale view) fails on the server and its reply is lost: the
	// node is then one version on with other data than k's.
	if _, err := counter.New(b.Connect(t), path).Add(ctx, 10); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	dropped := make(chan struct{})
	b.Reference().DropReplyAfterCommit(func(op, p string) bool {
		if op == "setData" && p == path {
			once.Do(func() { close(dropped) })
			return true
		}
		return false
	})
	v, err := k.Add(ctx, 1)
	select {
	case <-dropped:
	default:
		t.Fatal("no setData reply was dropped")
	}
	if err != nil || v != 12 {
		t.Fatalf("Add after a lost reply of a failed write = %d, %v; want 12", v, err)
	}
}

// The reply lost on real ZooKeeper and on the reference server, through
// the fault proxy: the connection is cut right after the write is sent.
func TestLostReplyEachBackend(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := counterPath(t)
		if err := counter.New(b.Connect(t), path).Set(ctx, 5); err != nil {
			t.Fatal(err)
		}
		p := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(p.Dialer()))
		k := counter.New(c, path)
		if _, err := k.Get(ctx); err != nil { // learn the version
			t.Fatal(err)
		}
		p.CutAfterNextRequest()
		v, err := k.Add(ctx, 1)
		got, gerr := counter.New(b.Connect(t), path).Get(ctx)
		if gerr != nil {
			t.Fatal(gerr)
		}
		switch {
		case err == nil && v == 6 && got == 6:
			// The write was not applied (cut before the server saw it) and
			// was retried, or it was applied and ... no: an applied write
			// with its reply lost cannot be told from another writer's.
			t.Log("write resolved as not applied and retried")
		case client.IsOutcomeUnknown(err) && (got == 5 || got == 6):
			t.Logf("outcome unknown, counter %d", got)
		default:
			t.Fatalf("Add with the connection cut = %d, %v; counter %d", v, err, got)
		}
	})
}

// The create of the counter's node, applied but with its reply lost, is
// reported as unknown and not retried: the node, found at version 0 with
// the data the create carried, may be that create's or another writer's,
// and writing again would count the delta twice.
func TestLostCreateReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := counterPath(t)
		admin := b.Connect(t)
		parent, _ := client.SplitPath(path)
		if err := admin.EnsurePath(ctx, parent); err != nil {
			t.Fatal(err)
		}
		p := zktest.NewProxy(t, b.Addr())
		p.CutAfterCreateOf(path)
		v, err := counter.New(b.Connect(t, client.WithDialer(p.Dialer())), path).Add(ctx, 5)
		got, gerr := counter.New(admin, path).Get(ctx)
		if gerr != nil {
			t.Fatal(gerr)
		}
		if !client.IsOutcomeUnknown(err) || got != 5 {
			t.Fatalf("Add(5) creating the node, its reply lost = %d, %v; counter %d: want outcome unknown and 5", v, err, got)
		}
	})
}

// Cancelling a call: one still queued is withdrawn (its context's error,
// nothing sent); one being written is outcome unknown.
func TestCancel(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	c := b.Connect(t, client.WithSessionTimeout(zktest.Scale(20*time.Second)))
	path := counterPath(t)
	k := counter.New(c, path)
	if _, err := k.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	flusherStopped(t, c, path)
	b.Reference().Pause()
	inFlight, cancelInFlight := context.WithCancel(ctx)
	first := make(chan error, 1)
	go func() { _, err := k.Add(inFlight, 1); first <- err }()
	recipetest.Eventually(t, "the first Add is being written", func() bool {
		return counter.Flushing(c, path) && counter.Queued(c, path) == 0
	})

	queued, cancelQueued := context.WithTimeout(ctx, zktest.Scale(100*time.Millisecond))
	defer cancelQueued()
	if _, err := k.Add(queued, 100); !errors.Is(err, context.DeadlineExceeded) || client.IsOutcomeUnknown(err) {
		t.Fatalf("queued Add whose context ended: %v, want its context's error", err)
	}
	cancelInFlight()
	if err := <-first; !client.IsOutcomeUnknown(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Add in flight: %v, want outcome unknown", err)
	}
	b.Reference().Resume()
	v, err := counter.New(b.Connect(t), path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != 1 && v != 2 {
		t.Fatalf("counter = %d, want 1 or 2 (the queued +100 must not be applied)", v)
	}
	// The counter goes on working.
	if got, err := k.Add(ctx, 1); err != nil || got != v+1 {
		t.Fatalf("Add after the cancellations = %d, %v; want %d", got, err, v+1)
	}
}

// The session expires between increments, and the server restarts under
// load: no increment is lost or doubled.
func TestExpiryAndRestart(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := counterPath(t)
		c := b.Connect(t)
		k := counter.New(c, path)
		if _, err := k.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
		b.ExpireSession(t, c.Session())
		var v int64
		var err error
		deadline := time.Now().Add(zktest.Scale(20 * time.Second))
		for {
			// A call may fail while the client learns of the expiry; it
			// must not count twice.
			v, err = k.Add(ctx, 1)
			if err == nil || time.Now().After(deadline) || client.IsOutcomeUnknown(err) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil || v != 2 {
			t.Fatalf("Add after the session expired = %d, %v; want 2", v, err)
		}
		srv := b.Reference()
		if srv == nil {
			return // restarting the shared real server is the ensemble test's job
		}
		var ty tally
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 4 {
			kc := counter.New(b.Connect(t), path)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(ctx, zktest.Scale(5*time.Second))
					ty.add(kc.Add(cctx, 1))
					cancel()
				}
			}()
		}
		// Restart while increments flow, and stop once they flow again.
		ty.waitCount(t, 20)
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		ty.waitCount(t, ty.count()+20)
		close(stop)
		wg.Wait()
		final, err := counter.New(b.Connect(t), path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ty.other {
			if !strings.Contains(e.Error(), "deadline") && !client.IsRetryable(e) {
				t.Errorf("unexpected error: %v", e)
			}
		}
		ty.check(t, final-2)
	})
}

// A missing parent whose create loses its reply is created again (a
// directory created twice only answers "node exists"): Add gets through,
// counted once.
func TestLostReplyOnParent(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := zktest.UniquePath(t)
		if err := admin.EnsurePath(ctx, base); err != nil {
			t.Fatal(err)
		}
		c, cut := recipetest.LostCreateOf(t, b, base+"/p")
		n, err := counter.New(c, base+"/p/hits").Add(ctx, 1)
		if err != nil {
			t.Fatalf("Add through a lost reply on its parent's create: %v", err)
		}
		if n != 1 {
			t.Fatalf("Add returned %d, want 1", n)
		}
		if !cut() {
			t.Fatal("the parent's create never lost its reply")
		}
		if got, err := counter.New(admin, base+"/p/hits").Get(ctx); err != nil || got != 1 {
			t.Fatalf("counter holds %d (%v), want 1", got, err)
		}
	})
}
