package zktest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Most tests share one real server per test binary and keep apart with
// UniquePath. Pair it with a TestMain that calls zktest.Main.
func ExampleSharedZooKeeper() {
	testSomething := func(t *testing.T) {
		zk := zktest.SharedZooKeeper(t) // skipped if ZooKeeper is not installed
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
		defer cancel()
		c, err := client.Connect(ctx, zk.Servers())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		base := zktest.UniquePath(t) // "/zktest/TestSomething-1"
		if err := c.EnsurePath(ctx, base); err != nil {
			t.Fatal(err)
		}
		// ... the test, under base ...
	}
	check(testSomething)
}

// A server of its own, for a test that crashes and restarts it.
func ExampleStartZooKeeper() {
	testRestart := func(t *testing.T) {
		zk := zktest.StartZooKeeper(t) // stopped in t.Cleanup
		ctx := context.Background()
		c, err := client.Connect(ctx, zk.Servers(), client.WithSessionTimeout(zktest.Scale(10*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Create(ctx, "/kept", []byte("v1"), client.Persistent); err != nil {
			t.Fatal(err)
		}
		zk.Kill(0)    // SIGKILL: a crash
		zk.Restart(0) // same port, same data; returns once it serves
		// The client reconnects on its own, a moment later: Retry rides that
		// out (a bare Get here may fail with "not connected").
		var data []byte
		err = c.Retry(ctx, func(ctx context.Context) (err error) {
			data, _, err = c.Get(ctx, "/kept")
			return err
		})
		if err != nil || string(data) != "v1" {
			t.Fatalf("after restart: %q, %v", data, err)
		}
	}
	check(testRestart)
}

// Failover: kill the leader of a 3-node ensemble and wait for the next one.
func ExampleStartEnsemble() {
	testFailover := func(t *testing.T) {
		zk := zktest.StartEnsemble(t, 3)
		leader, err := zk.Leader()
		if err != nil {
			t.Fatal(err)
		}
		zk.Kill(leader)
		deadline := time.Now().Add(zktest.Scale(30 * time.Second))
		for {
			if next, err := zk.Leader(); err == nil && next != leader {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no new leader")
			}
			time.Sleep(50 * time.Millisecond)
		}
		zk.Restart(leader) // rejoins as a follower, with its data
	}
	check(testFailover)
}

// A partition between ensemble members: the leader is cut from both
// followers, which elect a leader of their own while clients still reach
// the old one; after Heal it rejoins as a follower.
func ExampleZooKeeper_Isolate() {
	testIsolatedLeader := func(t *testing.T) {
		zk := zktest.StartEnsemble(t, 3)
		old, err := zk.Leader()
		if err != nil {
			t.Fatal(err)
		}
		zk.Isolate(old) // or zk.Partition([]int{old}, []int{a, b})
		deadline := time.Now().Add(zktest.Scale(30 * time.Second))
		for {
			if next, err := zk.Leader(); err == nil && next != old {
				break // the majority has a leader; old serves no one
			}
			if time.Now().After(deadline) {
				t.Fatal("no leader on the majority side")
			}
			time.Sleep(50 * time.Millisecond)
		}
		// ... the majority takes writes; clients of old alone are suspended ...
		zk.Heal() // old rejoins: wait for zk.Mode(old) to say "follower"
	}
	check(testIsolatedLeader)
}

// A write whose reply is lost: the create is applied, the client sees the
// connection drop and must find out for itself.
func ExampleNewProxy() {
	testLostReply := func(t *testing.T) {
		zk := zktest.SharedZooKeeper(t)
		proxy := zktest.NewProxy(t, zk.Servers()[0]) // closed in t.Cleanup
		ctx := context.Background()
		c, err := client.Connect(ctx, []string{proxy.Addr()})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		base := zktest.UniquePath(t)
		if err := c.EnsurePath(ctx, base); err != nil {
			t.Fatal(err)
		}

		proxy.CutAfterNextRequest()
		_, err = c.Create(ctx, base+"/n", nil, client.Persistent)
		if !client.IsOutcomeUnknown(err) {
			t.Fatalf("create through a cut connection: %v", err)
		}

		// A partition: the client is suspended; after Heal it reconnects.
		proxy.Blackhole()
		// ... wait for the client to notice ...
		proxy.Heal()
	}
	check(testLostReply)
}

// Expire a client's session on the server, at once: its ephemerals are
// deleted and it learns of the loss when it reconnects.
func ExampleExpireSession() {
	testSessionLoss := func(t *testing.T) {
		zk := zktest.SharedZooKeeper(t)
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
		defer cancel()
		c, err := client.Connect(ctx, zk.Servers())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		sess := c.Session()
		if err := zktest.ExpireSession(ctx, zk.Servers()[0], sess.ID(), sess.Password()); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sess.Done(): // the client has noticed
		case <-ctx.Done():
			t.Fatal("session loss not noticed")
		}
		// Expiring it again: it is gone.
		err = zktest.ExpireSession(ctx, zk.Servers()[0], sess.ID(), sess.Password())
		if !errors.Is(err, zktest.ErrSessionNotFound) {
			t.Fatal(err)
		}
	}
	check(testSessionLoss)
}

func ExampleScale() {
	// With ZKIT_TIME_SCALE=3 this is 15 s.
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(5*time.Second))
	defer cancel()
	_ = ctx
}

// One test body, run against real ZooKeeper and against the bundled
// reference server, with the faults that work on both.
func ExampleEachBackend() {
	testExpiry := func(t *testing.T) {
		zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
			c := b.Connect(t) // closed when the test ends
			sess := c.Session()
			b.ExpireSession(t, sess) // on the server, as a timeout would
			<-sess.Done()
			if !client.IsSessionLost(sess.Err()) {
				t.Fatal(sess.Err())
			}
		})
	}
	check(testExpiry)
}

// check hands an example's test body to TestExamples, which runs it: an
// example that shows a test must pass as one, not only compile.
func check(test func(t *testing.T)) { exampleBody = test }

var exampleBody func(t *testing.T)

func TestExamples(t *testing.T) {
	for _, ex := range []struct {
		name    string
		example func()
	}{
		{"SharedZooKeeper", ExampleSharedZooKeeper},
		{"StartZooKeeper", ExampleStartZooKeeper},
		{"StartEnsemble", ExampleStartEnsemble},
		{"ZooKeeper_Isolate", ExampleZooKeeper_Isolate},
		{"NewProxy", ExampleNewProxy},
		{"ExpireSession", ExampleExpireSession},
		{"EachBackend", ExampleEachBackend},
	} {
		exampleBody = nil
		ex.example()
		if exampleBody == nil {
			t.Fatalf("Example%s handed no test body to check", ex.name)
		}
		t.Run(ex.name, exampleBody)
	}
}
