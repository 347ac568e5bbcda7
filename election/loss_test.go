package election_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// A leader cut off from the server past its session timeout: with the
// default tolerance its term ends as soon as the connection is suspended,
// before the server expires the session and the next candidate leads, so
// the terms never overlap; a fenced resource refuses the old term's writes.
func TestLeaderPartitioned(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		ca := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(2*time.Second)))...)
		var led ledger
		old, err := election.New(ca, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		led.begin(old)
		pending := campaign(ctx, election.New(b.Connect(t), path, "b"))
		recipetest.WaitChildren(t, admin, path, 2)

		// The old leader writes to the resource for as long as its term
		// lasts.
		stale := make(chan bool, 1)
		go func() {
			for old.Err() == nil {
				if !led.write(old.Token()) {
					stale <- true
					return
				}
				time.Sleep(time.Millisecond)
			}
			stale <- false
		}()
		cut()
		recipetest.Within(t, old.Done(), "the partitioned leader's Done")
		if !errors.Is(old.Err(), recipes.ErrSuspended) {
			t.Fatalf("term ended with %v, want ErrSuspended", old.Err())
		}
		if <-stale {
			t.Fatal("the old leader's write was refused while its term lasted")
		}
		term := elected(t, pending)
		led.begin(term)
		if !led.write(term.Token()) {
			t.Fatal("the new leader's write was refused")
		}
		if led.write(old.Token()) {
			t.Fatal("the resource accepted the old term's token after the new one's")
		}
		led.check(t)

		heal()
		// The old session has expired on the server: its node is gone, and
		// ZooKeeper refuses the old guard.
		if _, err := ca.Multi(ctx, old.Guard(), client.CreateOp(path+"-mark", nil, client.Persistent)); err == nil {
			t.Fatal("ZooKeeper applied a write guarded by the partitioned term")
		}
		if err := old.Resign(ctx); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("Resign of a lost term: %v, want ErrLost", err)
		}
		term.Resign(ctx)
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// A server restart shorter than the session timeout: a leader whose
// tolerance covers it keeps its term, its node's watch is set again, its
// fenced writes go on, and the candidate behind it keeps waiting. (A
// leader with the default tolerance loses its term on the suspension; that
// is TestLeaderPartitioned's, and the lock's TestSuspensionEndsLease
// covers the deletion of its node after the reconnect.)
func TestServerRestart(t *testing.T) {
	run := func(t *testing.T, b zktest.Backend, restart func()) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		c := b.Connect(t, client.WithSessionTimeout(zktest.Scale(30*time.Second)))
		kept, err := election.New(c, path, "a", election.WithSuspendTolerance(time.Minute)).Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cb := b.Connect(t, client.WithSessionTimeout(zktest.Scale(30*time.Second)))
		behind := campaign(ctx, election.New(cb, path, "b"))
		// Restart only once b waits: requests in flight across a reconnect
		// meet a data race in go-zookeeper 1.0.4 (it reads its last zxid
		// without a lock while setting the watches again), which -race
		// reports.
		recipetest.WaitWatching(t, b.Addr(), kept.Node(), cb.Session().ID())
		sentinel := path + "-sentinel"
		if _, err := admin.Create(ctx, sentinel, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		_, _, fired, err := c.GetW(ctx, sentinel)
		if err != nil {
			t.Fatal(err)
		}

		restart()
		// The sentinel's watch fires only once c has set its watches again
		// on the server; until then c sends nothing (see above).
		for {
			_, err := admin.Set(ctx, sentinel, []byte("x"), -1)
			if err == nil {
				break
			}
			if ctx.Err() != nil || !client.IsRetryable(err) && !client.IsOutcomeUnknown(err) {
				t.Fatal(err) // (setting it twice is harmless)
			}
			time.Sleep(10 * time.Millisecond)
		}
		select {
		case <-fired:
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("the watch set before the restart never fired")
		}
		if kept.Err() != nil {
			t.Fatalf("the tolerant term ended: %v", kept.Err())
		}
		notElected(t, behind)
		if _, err := kept.Multi(ctx, client.CreateOp(path+"-mark", nil, client.Persistent)); err != nil {
			t.Fatalf("fenced write after the restart: %v", err)
		}
		// The term's own watch survived too: deleting its node ends it.
		if err := admin.Delete(ctx, kept.Node(), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, kept.Done(), "Done after the node was deleted")
		if !errors.Is(kept.Err(), recipes.ErrNodeDeleted) {
			t.Fatalf("term ended with %v, want ErrNodeDeleted", kept.Err())
		}
		elected(t, behind).Resign(ctx)
	}
	t.Run("zookeeper", func(t *testing.T) {
		zk := zktest.StartZooKeeper(t)
		run(t, zktest.Backend{Name: "zookeeper", Servers: zk.Servers()}, func() {
			zk.Kill(0)
			zk.Restart(0)
		})
	})
	t.Run("reference", func(t *testing.T) {
		b := zktest.ReferenceBackend(t)
		run(t, b, func() {
			if err := b.Reference().Restart(); err != nil {
				t.Fatal(err)
			}
		})
	})
}
