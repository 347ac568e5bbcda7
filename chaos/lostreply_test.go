package chaos

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// Scenario 5: the reply to a create is lost after the server committed it
// (the proxy cuts the connection once the server has answered), again and
// again: for lock and read/write lock attempts, with and without a holder
// ahead, and for plain protected creates. Each attempt ends with exactly
// one node, owned by the attempt's session; none is left behind.
func lostReplies(t *testing.T, e *env) Summary {
	rounds := pick(12, 120)
	admin := e.admin(t)
	prog := NewProgress()
	ctx := testContext(t, 5*time.Minute)
	v := e.worker(t, 0, 10*time.Second)
	o := e.worker(t, 1, 10*time.Second)
	loads := []*lockLoad{
		newLockLoad(t, admin, "lock", []*worker{v, o}, 0, NewHistory(), prog),
		newLockLoad(t, admin, "rwlock", []*worker{v, o}, 0, NewHistory(), prog),
	}
	jobs := loads[0].dir + "-jobs"
	if err := admin.EnsurePath(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	sub := v.c.Subscribe()
	defer sub.Close()
	suspended := countStates(sub, client.StateSuspended)

	sum := Summary{}
	arm := func() {
		waitFor(t, 20*time.Second, "the victim has one connection to cut", v.r.CutAfterNextRequest)
		sum.Faults++
	}
	for i := range rounds {
		l := loads[i%2]
		shared := l.name == "rwlock" && i%4 == 1
		var ahead *held
		if i%3 == 2 {
			ahead = mustTake(t, ctx, l, o, false)
		}
		arm()
		start := time.Now()
		got := make(chan *held, 1)
		go func() { got <- takeOrNil(t, ctx, l, v, shared) }()
		if ahead != nil {
			waitFor(t, 20*time.Second, "the victim queues behind the holder", func() bool { return len(children(t, admin, l.dir)) == 2 })
			ahead.release()
		}
		hd := waitHeld(t, got, "the victim's attempt whose create reply was lost")
		sum.Recovery = max(sum.Recovery, time.Since(start))
		if names := children(t, admin, l.dir); len(names) != 1 || l.dir+"/"+names[0] != hd.lease.Node() {
			t.Errorf("%s: round %d: nodes %v, want only the holder's %s", l.name, i, names, hd.lease.Node())
			sum.Violations++
		}
		hd.write(ctx)
		hd.release()
		waitFor(t, 20*time.Second, "no node is left behind", func() bool { return len(children(t, admin, l.dir)) == 0 })

		if i%3 == 0 {
			arm()
			if _, err := v.c.CreateProtected(ctx, jobs+"/job-", []byte("x"), client.PersistentSequential); err != nil {
				t.Fatalf("protected create after a lost reply: %v", err)
			}
			if n, want := len(children(t, admin, jobs)), i/3+1; n != want {
				t.Errorf("round %d: %d protected nodes, want %d (no duplicate)", i, n, want)
				sum.Violations++
			}
		}
	}
	fired := int(suspended.Load())
	if fired < sum.Faults {
		t.Errorf("%d cuts armed, %d connections lost: some cuts did not happen", sum.Faults, fired)
	}
	for _, l := range loads {
		sum.Recipes = append(sum.Recipes, l.name)
		sum.Ops += l.h.Len()
		sum.Violations += checkHistory(t, l.name, l.h, LockModel)
	}
	sum.Recipes = append(sum.Recipes, "protected create")
	sum.Held = fmt.Sprintf("%d replies lost after commit; every attempt held with exactly one node, none left behind", fired)
	return sum
}
