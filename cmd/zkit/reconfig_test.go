package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// Servers without reconfigEnabled say so, on both servers; credentials
// that are not a super user's are refused with the fix.
func TestEnsembleReconfigRefused(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		r := zkitOn(t, b.Addr(), exitFailed, "ensemble", "reconfig", "--remove", "2")
		oneErrorLine(t, r, "zkit ensemble reconfig: the servers run without reconfigEnabled=true")
	})
}

func TestEnsembleReconfigUsage(t *testing.T) {
	expectUsage(t, "zkit ensemble reconfig: ", [][]string{
		{"ensemble", "reconfig"},
		{"ensemble", "reconfig", "extra", "--remove", "2"},
		{"ensemble", "reconfig", "--add", ","},
		{"ensemble", "reconfig", "--remove", "two"},
		{"ensemble", "reconfig", "--members", "server.1=h:1:2;3", "--remove", "2"},
		{"ensemble", "reconfig", "--add", "server.4=h:1:2;3", "--from-version", "xyz"},
		{"ensemble", "reconfig", "--add", "not-a-server-line"},
	})
}

// holder is one client of the reconfiguration test, holding a lock.
type holder struct {
	c       *client.Client
	session int64
	lease   *lock.Lease
	events  *client.Subscription
}

// onServers counts the holders' sessions each server lists in cons, and
// how many no server lists.
func onServers(t *testing.T, servers []string, holders []holder) (per map[string]int, nowhere int) {
	t.Helper()
	per = map[string]int{}
	found := map[int64]bool{}
	for _, s := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(5*time.Second))
		connected, err := zktest.ConnectedSessions(ctx, s)
		cancel()
		if err != nil {
			continue // a server stopped
		}
		for _, h := range holders {
			if connected[h.session] {
				per[s]++
				found[h.session] = true
			}
		}
	}
	return per, len(holders) - len(found)
}

func figures(servers []string, per map[string]int) string {
	var parts []string
	for i, s := range servers {
		parts = append(parts, fmt.Sprintf("server %d: %d", i+1, per[s]))
	}
	return strings.Join(parts, ", ")
}

// A real ensemble grows from three servers to five and shrinks back to
// three by zkit ensemble reconfig while forty clients that follow it
// (client.WithEnsembleTracker) hold locks: the clients spread over the
// added servers, leave the removed ones before they are stopped, and
// every lock is held throughout, on the session that took it.
func TestEnsembleReconfigWithLocks(t *testing.T) {
	z := zktest.StartEnsemble(t, 3, zktest.WithReconfig(), zktest.WithSuperUser("super", "secret"))
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(3*time.Minute))
	defer cancel()
	initial := z.Servers()
	const n = 40
	holders := make([]holder, n)
	for i := range holders {
		c, err := client.Connect(ctx, initial, client.WithEnsembleTracker(), client.WithSessionTimeout(20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		// A move to rebalance is a reconnection: the lease must outlast
		// one.
		lease, err := lock.New(c, fmt.Sprintf("/reconfig/lock-%d", i), lock.WithSuspendTolerance(10*time.Second)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		holders[i] = holder{c, c.Session().ID(), lease, c.Subscribe()}
	}
	super := []string{"--servers", strings.Join(initial, ","), "--auth", "digest:super:secret"}
	before, _ := onServers(t, initial, holders)
	t.Logf("3 servers, 40 clients: %s", figures(initial, before))

	// Grow: two servers join, then one reconfiguration adds both.
	j4, j5 := z.Join(), z.Join()
	r := zkitOn(t, super[1], exitOK, append(super[2:], "ensemble", "reconfig",
		"--add", z.ServerLine(j4, "participant")+","+z.ServerLine(j5, "participant"))...)
	if strings.Count(r.stdout, "server.") != 5 || !strings.Contains(r.stdout, "\nversion=") {
		t.Fatalf("reconfig --add printed %q", r.stdout)
	}
	all := z.Servers()
	var grown map[string]int
	recipetest.Eventually(t, "every client knows five servers and is connected to one", func() bool {
		for _, h := range holders {
			if len(h.c.Servers()) != 5 {
				return false
			}
		}
		var nowhere int
		grown, nowhere = onServers(t, all, holders)
		return nowhere == 0 && total(grown) == n // a moved session no longer listed where it was
	})
	t.Logf("5 servers: %s; %d of 40 on the two added", figures(all, grown), grown[all[j4]]+grown[all[j5]])
	if grown[all[j4]] == 0 || grown[all[j5]] == 0 {
		t.Errorf("no client moved to an added server: %s", figures(all, grown))
	}

	// Shrink: one reconfiguration removes both; the clients leave them.
	r = zkitOn(t, super[1], exitOK, append(super[2:], "ensemble", "reconfig", "--remove", "4,5", "-o", "json")...)
	var cfg configJSON
	if err := json.Unmarshal([]byte(r.stdout), &cfg); err != nil || len(cfg.Servers) != 3 || cfg.Version == "" {
		t.Fatalf("reconfig --remove -o json printed %q (%v)", r.stdout, err)
	}
	var shrunk map[string]int
	recipetest.Eventually(t, "every client knows three servers, and none is connected to a removed one", func() bool {
		for _, h := range holders {
			if len(h.c.Servers()) != 3 {
				return false
			}
		}
		var nowhere int
		shrunk, nowhere = onServers(t, all, holders)
		return nowhere == 0 && total(shrunk) == n && shrunk[all[j4]] == 0 && shrunk[all[j5]] == 0
	})
	t.Logf("back to 3 servers: %s", figures(all, shrunk))
	z.Kill(j4)
	z.Kill(j5)

	// Every lock held throughout, on its session, and still held: a
	// contender cannot take one.
	contender, err := client.Connect(ctx, initial)
	if err != nil {
		t.Fatal(err)
	}
	defer contender.Close()
	for i, h := range holders {
		select {
		case <-h.lease.Done():
			t.Fatalf("holder %d lost its lock: %v", i, context.Cause(h.lease.Context()))
		default:
		}
		if h.c.Session().ID() != h.session || !h.c.Session().Alive() {
			t.Fatalf("holder %d's session changed or ended", i)
		}
		if slices.Contains(h.c.Servers(), all[j4]) || slices.Contains(h.c.Servers(), all[j5]) {
			t.Errorf("holder %d still lists a removed server: %v", i, h.c.Servers())
		}
		if _, err := lock.New(contender, fmt.Sprintf("/reconfig/lock-%d", i)).TryLock(ctx); err == nil {
			t.Fatalf("a contender took holder %d's lock", i)
		}
	}
	moves := 0
	for _, h := range holders { // a figure for the log, not checked: what has come by now
		for drained := false; !drained; {
			select {
			case ev := <-h.events.Events():
				if ev.State == client.StateReconnected {
					moves++
				}
			case <-time.After(100 * time.Millisecond):
				drained = true
			}
		}
		h.events.Close()
	}
	t.Logf("%d reconnections to rebalance; all 40 locks held throughout, on their sessions", moves)
	for _, h := range holders {
		if err := h.lease.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func total(per map[string]int) int {
	n := 0
	for _, v := range per {
		n += v
	}
	return n
}
