package membership_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/zktest"
)

// 200 members join, and half of them leave again, while one server of a
// 3-node ensemble (the leader) is killed and restarted: every watcher ends
// on the true final group, and so does List.
func TestChurnAcrossServerRestart(t *testing.T) {
	t.Run("ensemble", func(t *testing.T) {
		zk := zktest.StartEnsemble(t, 3)
		churn(t, zk.Servers(), func() func() {
			leader, err := zk.Leader()
			if err != nil {
				t.Fatal(err)
			}
			zk.Kill(leader)
			return func() { zk.Restart(leader) }
		})
	})
	t.Run("reference", func(t *testing.T) {
		b := zktest.ReferenceBackend(t)
		churn(t, b.Servers, func() func() {
			if err := b.Reference().Restart(); err != nil {
				t.Fatal(err)
			}
			return func() {}
		})
	})
}

// churn runs the churn against servers; fault breaks one server and
// returns the call that repairs it.
func churn(t *testing.T, servers []string, fault func() (repair func())) {
	const members, sessions, watchers = 200, 10, 5
	ctx := recipetest.Context(t)
	connect := func() *client.Client {
		c, err := client.Connect(ctx, servers, client.WithSessionTimeout(zktest.Scale(15*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	admin := connect()
	path := groupPath(t, admin)

	// Each watcher keeps only its latest snapshot.
	latest := make([]atomic.Pointer[[]membership.Entry], watchers)
	ended := make([]atomic.Pointer[error], watchers)
	wcs := make([]*client.Client, watchers)
	for i := range latest {
		wcs[i] = connect()
		feed := membership.New(wcs[i], path).Watch(ctx)
		go func() {
			for s := range feed.Values() {
				latest[i].Store(&s)
			}
			err := feed.Err()
			ended[i].Store(&err)
		}()
	}

	clients := make([]*client.Client, sessions)
	for i := range clients {
		clients[i] = connect()
	}
	var (
		done   atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		stayed = map[string]*membership.Member{}
		errs   = make(chan error, members)
	)
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := s; i < members; i += sessions {
				id := fmt.Sprintf("m%03d", i)
				m, err := membership.New(clients[s], path).Join(ctx, id, []byte(id))
				if err == nil && i%2 == 0 {
					err = m.Leave(ctx)
				} else if err == nil {
					mu.Lock()
					stayed[id] = m
					mu.Unlock()
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
					return
				}
				done.Add(1)
			}
		}()
	}
	waitFor := func(n int64) {
		deadline := time.Now().Add(zktest.Scale(60 * time.Second))
		for done.Load() < n && len(errs) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(members / 4)
	repair := fault()
	waitFor(members * 3 / 4)
	repair()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	want := map[string]bool{}
	for i := 1; i < members; i += 2 {
		want[fmt.Sprintf("m%03d", i)] = true
	}
	wantIDs := sortedIDs(want)
	if len(stayed) != len(want) {
		t.Fatalf("%d members stayed, want %d", len(stayed), len(want))
	}
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for i := range latest {
		for {
			s := latest[i].Load()
			if s != nil && ids(*s) == wantIDs {
				break
			}
			if time.Now().After(deadline) {
				got := "(none)"
				if s != nil {
					got = ids(*s)
				}
				why := "still following"
				if e := ended[i].Load(); e != nil {
					why = fmt.Sprintf("feed ended: %v", *e)
				}
				lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				own, err := membership.New(wcs[i], path).List(lctx)
				cancel()
				suspended, _ := wcs[i].Suspended()
				t.Fatalf("watcher %d (%s; its client: suspended %v, session alive %v, List %d members, %v) ended on %q, want %q",
					i, why, suspended, wcs[i].Session().Alive(), len(own), err, got, wantIDs)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	got, err := membership.New(admin, path).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids(got) != wantIDs {
		t.Fatalf("List = %q, want %q", ids(got), wantIDs)
	}
	// Every member that stayed is present (again) on its live session.
	for id, m := range stayed {
		pctx, cancel := context.WithTimeout(ctx, zktest.Scale(20*time.Second))
		p, err := m.Present(pctx)
		cancel()
		if err != nil {
			t.Fatalf("%s not present: %v", id, err)
		}
		if !p.Session().Alive() {
			t.Fatalf("%s present on a lost session", id)
		}
	}
}
