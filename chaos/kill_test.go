package chaos

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Scenario 1: kill the leader while every recipe is under load, restart
// it, repeat. Sessions survive the election (their timeout is longer);
// leases held on a connection that drops end (zkit's default suspend
// tolerance is 0) and the histories stay linearizable.
func killLeader(t *testing.T, e *env) Summary {
	return underLoad(t, e, 10*time.Second, false, func(prog *Progress, sum *Summary) {
		for range pick(2, 10) {
			leader, err := e.z.Leader()
			if err != nil {
				t.Fatal(err)
			}
			at := prog.Now()
			e.z.Kill(leader)
			sum.Faults++
			time.Sleep(zktest.Scale(time.Second))
			e.z.Restart(leader)
			waitProgress(t, prog, at)
			sum.Recovery = max(sum.Recovery, prog.Recovery(at))
			e.healthy(t)
			// Let the load run on the full ensemble before the next kill.
			waitProgress(t, prog, prog.Now())
		}
	})
}

// underLoad runs every recipe's workload, on workers of their own with the
// given session timeout, while faults injects its faults, then checks
// them all. With keepSessions, every session lost is a violation.
func underLoad(t *testing.T, e *env, timeout time.Duration, keepSessions bool, faults func(prog *Progress, sum *Summary)) Summary {
	t.Helper()
	admin := e.admin(t)
	prog := NewProgress()
	ws := lockLoads(t, e, admin, prog, 4, timeout)
	ws = append(ws,
		newCounterLoad(t, e, admin, 3, timeout, prog),
		newMembersLoad(t, admin, e.workers(t, 3, timeout), prog),
		newBarrierLoad(t, admin, e.workers(t, 4, timeout), prog),
		newCacheLoad(t, e, admin, prog, timeout))
	wit := startWitness(t, e)
	prog.stalled = func(missing []string) string {
		why := ""
		if d := divergence(t, e, ws, missing...); d != "" {
			why = "ZooKeeper's servers disagree on committed data: " + d
		} else if proof, _ := wit.lost(t, e); proof != "" {
			// A write lost after it was acknowledged (a release, say)
			// can leave a queue waiting for ever, on every server alike.
			why = "ZooKeeper lost acknowledged writes of the witness: " + proof
		}
		if why != "" {
			dumpLoads(t, e, admin, ws) // where the stall is, for the record
		}
		return why
	}
	stop := runWorkloads(testContext(t, 10*time.Minute), ws)
	defer func() {
		if t.Failed() { // while the workloads still run: where are they stuck?
			dumpLoads(t, e, admin, ws)
		}
		stop()
	}()
	sum := Summary{}
	waitProgress(t, prog, 0)
	faults(prog, &sum)
	stop()
	if proof, checked := wit.lost(t, e); proof != "" {
		// What the recipes saw, for the record, before the run is set
		// aside: ZooKeeper's fault explains it.
		for _, w := range ws {
			if d, ok := w.(interface{ Diagnose(*testing.T) }); ok {
				d.Diagnose(t)
			}
		}
		t.Skipf("ZooKeeper lost acknowledged writes of the witness, so the recipes' histories cannot be judged: %s", proof)
	} else {
		t.Logf("witness: no acknowledged write lost (%s)", checked)
	}
	if d := divergence(t, e, ws); d != "" {
		// The checks read through the admin's server, which may be the
		// replica that lost committed changes (see waitProgress).
		t.Skipf("ZooKeeper's servers disagree on committed data after the faults, so the load cannot be judged: %s", d)
	}
	checkWorkloads(t, ws, &sum)
	sum.Held = fmtSessions(ws) + "; " + sum.Held
	if keepSessions {
		for _, w := range workersOf(ws) {
			if !w.sessionKept() {
				t.Errorf("worker %d lost its session", w.id)
				sum.Violations++
			}
		}
	}
	return sum
}

// waitProgress waits until every workload has made progress after t.
func waitProgress(t *testing.T, prog *Progress, at int64) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(60 * time.Second))
	for {
		all, missing := prog.Since(at)
		if all {
			return
		}
		if time.Now().After(deadline) {
			if prog.stalled != nil {
				if d := prog.stalled(missing); d != "" {
					// Not zkit's to judge: a recipe on a server whose copy of
					// the tree lost committed changes waits for nodes that are
					// gone everywhere else (see docs/reliability.md).
					t.Skipf("no progress of %v within %v, and %s", missing, zktest.Scale(60*time.Second), d)
				}
			}
			t.Fatalf("no progress of %v within %v", missing, zktest.Scale(60*time.Second))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// divergence reports whether ZooKeeper's servers hold different children
// for the queue of a lock workload named in only (every lock workload when
// only is empty), each server read alone after a sync with the leader:
// a replica that lost committed changes. It is proof only about queues
// that stand still: each server is read twice, a few seconds apart, and a
// queue counts only if every server showed it the same both times while
// the servers disagreed. ("" if no queue shows it, or if a server cannot
// be asked.) Callers pass the workloads that stalled, or call it once the
// workloads have stopped.
func divergence(t *testing.T, e *env, ws []workload, only ...string) string {
	ctx := testContext(t, 30*time.Second)
	var queues []*lockLoad
	for _, w := range ws {
		if l, ok := w.(*lockLoad); ok && (len(only) == 0 || slices.Contains(only, l.name)) {
			queues = append(queues, l)
		}
	}
	if len(queues) == 0 {
		return ""
	}
	listings := func() map[string][][]string { // queue -> each server's sorted listing
		out := map[string][][]string{}
		for _, l := range queues {
			for _, srv := range e.z.Servers() {
				names, _, err := syncedChildren(ctx, srv, l.dir)
				if err != nil {
					return nil
				}
				out[l.name] = append(out[l.name], names)
			}
		}
		return out
	}
	differ := func(lists [][]string) bool {
		return slices.ContainsFunc(lists, func(s []string) bool { return !slices.Equal(s, lists[0]) })
	}
	first := listings()
	if first == nil || !slices.ContainsFunc(queues, func(l *lockLoad) bool { return differ(first[l.name]) }) {
		return ""
	}
	time.Sleep(zktest.Scale(3 * time.Second))
	second := listings()
	var parts []string
	for _, l := range queues {
		a, b := first[l.name], second[l.name]
		if !differ(a) || !slices.EqualFunc(a, b, slices.Equal) {
			continue // agreeing, or still moving: no proof
		}
		var counts []string
		for i, srv := range e.z.Servers() {
			counts = append(counts, fmt.Sprintf("%s: %d nodes", srv, len(b[i])))
		}
		parts = append(parts, l.name+" queue ("+strings.Join(counts, ", ")+", unchanged for 3s)")
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// syncedChildren lists dir on server srv alone, after a sync with the
// leader, sorted, with the directory's Stat.
func syncedChildren(ctx context.Context, srv, dir string) ([]string, *client.Stat, error) {
	c, err := client.Connect(ctx, []string{srv})
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	if err := c.Sync(ctx, dir); err != nil {
		return nil, nil, err
	}
	names, st, err := c.Children(ctx, dir)
	slices.Sort(names)
	return names, st, err
}

// dumpLoads logs, for a failed scenario, the queue of every lock workload
// (each node with the session that owns it) and the workers' sessions,
// and writes every goroutine's stack to a file it names.
func dumpLoads(t *testing.T, e *env, admin *client.Client, ws []workload) {
	if f, err := os.CreateTemp("", "chaos-goroutines-*.txt"); err == nil {
		pprof.Lookup("goroutine").WriteTo(f, 1)
		f.Close()
		t.Logf("goroutines at the failure: %s", f.Name())
	}
	for _, line := range recipeLog.Lines() {
		if !strings.Contains(line, "lease lost") {
			t.Logf("recipe log: %s", line)
		}
	}
	ctx := testContext(t, 20*time.Second)
	for _, w := range ws {
		var sessions []string
		for _, wk := range w.Workers() {
			s := wk.c.Session()
			sessions = append(sessions, fmt.Sprintf("worker %d: session %#x alive=%v lost=%d", wk.id, s.ID(), s.Alive(), wk.lost.Load()))
		}
		t.Logf("%s: %s", w.Name(), strings.Join(sessions, "; "))
		l, ok := w.(*lockLoad)
		if !ok {
			continue
		}
		for _, name := range children(t, admin, l.dir) {
			_, st, err := admin.Exists(ctx, client.JoinPath(l.dir, name))
			if err != nil || st == nil {
				t.Logf("%s: %s: %v", l.name, name, err)
				continue
			}
			released := ""
			if at, ok := l.unlocked.Load(client.JoinPath(l.dir, name)); ok {
				// Its holder's delete was acknowledged, yet the node is
				// here: ZooKeeper lost the delete.
				released = fmt.Sprintf(", released by its holder at %s", at.(time.Time).Format("15:04:05.000"))
			}
			t.Logf("%s: %s owner %#x czxid %d%s", l.name, name, st.EphemeralOwner, st.Czxid, released)
		}
		// Each server's own view: do they agree?
		for _, srv := range e.z.Servers() {
			names, st, err := syncedChildren(ctx, srv, l.dir)
			if err != nil {
				t.Logf("%s: server %s: %v", l.name, srv, err)
				continue
			}
			t.Logf("%s: server %s: cversion %d pzxid %d, %d children %v", l.name, srv, st.Cversion, st.Pzxid, len(names), names)
		}
	}
}
