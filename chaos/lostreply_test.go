package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// Scenario 5: the reply to a create is lost after the server committed it
// (the proxy cuts the connection once the server has answered the create
// that the recipe makes), again and again: for lock and read/write lock
// attempts and election candidacies, with and without a holder ahead, and
// for plain protected creates. Each attempt ends with exactly one node,
// owned by the attempt's session; none is left behind.
func lostReplies(t *testing.T, e *env) Summary {
	rounds := pick(4, 40)
	admin := e.admin(t)
	ctx := testContext(t, 5*time.Minute)
	x := &lostReply{t: t, ctx: ctx, admin: admin, prog: NewProgress(),
		v: e.worker(t, 0, 10*time.Second), o: e.worker(t, 1, 10*time.Second)}
	sub := x.v.c.Subscribe()
	defer sub.Close()
	suspended := countStates(sub, client.StateSuspended)

	var cases []lostCase
	for _, name := range []string{"lock", "rwlock", "election"} {
		l := newLockLoad(t, admin, name, []*worker{x.v, x.o}, 0, NewHistory(), x.prog)
		x.loads = append(x.loads, l)
		cases = append(cases, lostCase{name, func(i int) { x.lease(l, i) }})
	}
	requeue := newLockLoad(t, admin, "election-requeue", []*worker{x.v, x.o}, 0, NewHistory(), x.prog)
	x.loads = append(x.loads, requeue)
	cases = append(cases, lostCase{"election requeue", func(i int) { x.requeue(requeue, i) }})
	cases = append(cases, lostCase{"protected create", x.protectedCreate()})
	for i := range rounds {
		for _, c := range cases {
			c.run(i)
		}
	}
	fired := int(suspended.Load())
	if fired < x.sum.Faults {
		t.Errorf("%d cuts armed, %d connections lost: some cuts did not happen", x.sum.Faults, fired)
	}
	for _, l := range x.loads {
		x.sum.Ops += l.h.Len()
		x.sum.Violations += checkHistory(t, l.name, l.h, l.model)
	}
	for _, c := range cases {
		x.sum.Recipes = append(x.sum.Recipes, c.name)
	}
	x.sum.Held = fmt.Sprintf("%d create replies lost after commit; every attempt ended with exactly one node, its own, none left behind", fired)
	return x.sum
}

// lostCase is one recipe's round of scenario 5.
type lostCase struct {
	name string
	run  func(round int)
}

// lostReply is scenario 5's state: the victim v, whose create replies are
// lost, and the other worker o.
type lostReply struct {
	t     *testing.T
	ctx   context.Context
	admin *client.Client
	prog  *Progress
	v, o  *worker
	loads []*lockLoad
	sum   Summary
}

// arm makes v's next create under prefix lose its reply.
func (x *lostReply) arm(prefix string) {
	waitFor(x.t, 20*time.Second, "the victim has one connection to cut", func() bool { return x.v.r.CutAfterNextCreate(prefix) })
	x.sum.Faults++
}

// armMulti makes v's next multi that creates under prefix lose its reply.
func (x *lostReply) armMulti(prefix string) {
	waitFor(x.t, 20*time.Second, "the victim has one connection to cut", func() bool { return x.v.r.CutAfterNextMultiCreate(prefix) })
	x.sum.Faults++
}

// recovered records how long an attempt took from the cut.
func (x *lostReply) recovered(since time.Time) {
	x.sum.Recovery = max(x.sum.Recovery, time.Since(since))
}

// violation reports a violation.
func (x *lostReply) violation(format string, args ...any) {
	x.t.Helper()
	x.t.Errorf(format, args...)
	x.sum.Violations++
}

// ownNode checks that node exists and belongs to w's current session.
func (x *lostReply) ownNode(what, node string, w *worker) {
	x.t.Helper()
	_, st, err := syncedGet(x.ctx, x.admin, node)
	switch {
	case err != nil:
		x.violation("%s: its node %s: %v", what, node, err)
	case st.EphemeralOwner != w.c.Session().ID():
		x.violation("%s: its node %s belongs to session 0x%x, not the victim's 0x%x", what, node, st.EphemeralOwner, w.c.Session().ID())
	}
}

// lease is a round of a lock, read/write lock or election: the victim's
// attempt (behind a holder every other round) loses its create reply,
// then holds (leads) with exactly one node.
func (x *lostReply) lease(l *lockLoad, i int) {
	t, ctx := x.t, x.ctx
	shared := l.name == "rwlock" && i%4 == 1
	var ahead *held
	if i%2 == 1 {
		ahead = mustTake(t, ctx, l, x.o, false)
	}
	x.arm(l.dir + "/")
	start := time.Now()
	got := make(chan *held, 1)
	go func() { got <- takeOrNil(t, ctx, l, x.v, shared) }()
	if ahead != nil {
		waitFor(t, 20*time.Second, "the victim queues behind the holder", func() bool { return len(children(t, x.admin, l.dir)) == 2 })
		ahead.release()
	}
	hd := waitHeld(t, got, "the victim's attempt whose create reply was lost")
	x.recovered(start)
	x.heldAlone(l, i, hd)
}

// heldAlone checks that the victim's hd, held after a lost reply, has the
// only node of l, its own; then writes, releases, and waits until no node
// is left.
func (x *lostReply) heldAlone(l *lockLoad, i int, hd *held) {
	t := x.t
	if names := children(t, x.admin, l.dir); len(names) != 1 || l.dir+"/"+names[0] != hd.lease.Node() {
		x.violation("%s: round %d: nodes %v, want only the holder's %s", l.name, i, names, hd.lease.Node())
	}
	x.ownNode(l.name, hd.lease.Node(), x.v)
	hd.write(x.ctx)
	hd.release()
	waitFor(t, 20*time.Second, "no node is left behind", func() bool { return len(children(t, x.admin, l.dir)) == 0 })
}

// requeue is a round of an election's Term.Requeue: the victim leads and
// requeues (behind a candidate of the other worker every other round), and
// the reply to its transaction, the create of its next node with the
// delete of its term's, is lost. It leads again with exactly one node.
func (x *lostReply) requeue(l *lockLoad, i int) {
	t, ctx := x.t, x.ctx
	hd := mustTake(t, ctx, l, x.v, false)
	var behind chan *held
	if i%2 == 1 {
		behind = make(chan *held, 1)
		go func() { behind <- takeOrNil(t, ctx, l, x.o, false) }()
		waitFor(t, 20*time.Second, "the other candidate queues behind the victim", func() bool { return len(children(t, x.admin, l.dir)) == 2 })
	}
	hd.write(ctx)
	x.armMulti(l.dir + "/")
	start := time.Now()
	got := make(chan *held, 1)
	go func() {
		next, err := l.requeue(ctx, hd)
		if err != nil {
			t.Errorf("%s: %v", l.name, err)
		}
		got <- next
	}()
	if behind != nil {
		other := waitHeld(t, behind, "the candidate behind the victim")
		if names := children(t, x.admin, l.dir); len(names) != 2 {
			x.violation("%s: round %d: nodes %v while the other candidate leads, want its and the victim's next", l.name, i, names)
		}
		other.release()
	}
	next := waitHeld(t, got, "the victim's requeue whose reply was lost")
	x.recovered(start)
	x.heldAlone(l, i, next)
}

// protectedCreate returns the round of plain protected creates: each one
// leaves exactly one node.
func (x *lostReply) protectedCreate() func(int) {
	jobs := x.loads[0].dir + "-jobs"
	if err := x.admin.EnsurePath(x.ctx, jobs); err != nil {
		x.t.Fatal(err)
	}
	return func(i int) {
		x.arm(jobs + "/")
		start := time.Now()
		if _, err := x.v.c.CreateProtected(x.ctx, jobs+"/job-", []byte("x"), client.PersistentSequential); err != nil {
			x.t.Fatalf("protected create after a lost reply: %v", err)
		}
		x.recovered(start)
		if n, want := len(children(x.t, x.admin, jobs)), i+1; n != want {
			x.violation("round %d: %d protected nodes, want %d (no duplicate)", i, n, want)
		}
	}
}
