package barrier_test

import (
	"slices"
	"testing"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// zkit's barriers and Curator's, in one Java peer per backend.
func TestCurator(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		java := recipetest.StartBarrierPeer(t, b.Servers)
		curatorDoubleBarrier(t, b, java)
		curatorSimpleBarrier(t, b, java)
	})
}

// zkit members and Curator DistributedDoubleBarrier members share one
// barrier: nobody of either kind gets in before the last one arrives, or
// out before the last one leaves.
func curatorDoubleBarrier(t *testing.T, b zktest.Backend, java *recipetest.CuratorPeer) {
	const n = 4
	ctx := recipetest.Context(t)
	admin := b.Connect(t)
	path := barrierPath(t, admin)
	ms := newMembers(t, b, path, n, 2)
	const ms60 = 60000
	errs := make(chan error, 2)

	java.Send("d1 double %s %d enter %d", path, n, ms60)
	go func() { errs <- ms[0].d.Enter(ctx) }()
	java.Send("d2 double %s %d enter %d", path, n, ms60)
	waitMembers(t, admin, path, 3)
	java.Quiet("3 of 4 members are in")
	quiet(t, errs, "a zkit member entered with 3 of 4 members in")

	go func() { errs <- ms[1].d.Enter(ctx) }()
	got := []string{java.Next(), java.Next()}
	slices.Sort(got)
	if !slices.Equal(got, []string{"d1 entered", "d2 entered"}) {
		t.Fatalf("curator members said %v", got)
	}
	for range 2 {
		if err := recv(t, errs, "zkit members to enter"); err != nil {
			t.Fatal(err)
		}
	}

	// One of each kind leaves; neither may return while the others
	// are inside.
	java.Send("d1 double %s %d leave %d", path, n, ms60)
	go func() { errs <- ms[0].d.Leave(ctx) }()
	java.Quiet("two members are still inside")
	quiet(t, errs, "a zkit member left while two were inside")
	java.Send("d2 double %s %d leave %d", path, n, ms60)
	java.Quiet("a zkit member is still inside")
	quiet(t, errs, "a zkit member left while one was inside")
	if err := ms[1].d.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, errs, "the other zkit member to leave"); err != nil {
		t.Fatal(err)
	}
	got = []string{java.Next(), java.Next()}
	slices.Sort(got)
	if !slices.Equal(got, []string{"d1 left", "d2 left"}) {
		t.Fatalf("curator members said %v", got)
	}
	waitMembers(t, admin, path, 0)
}

// zkit's simple barrier and Curator's DistributedBarrier are the same
// node: each side waits on the other's.
func curatorSimpleBarrier(t *testing.T, b zktest.Backend, java *recipetest.CuratorPeer) {
	ctx := recipetest.Context(t)
	c := b.Connect(t)
	path := zktest.UniquePath(t) + "/gate"
	gate := barrier.New(c, path)

	// Curator sets, zkit waits.
	java.Send("j1 simple %s set", path)
	java.Expect("j1 set")
	done := make(chan error, 1)
	go func() { done <- gate.Wait(ctx) }()
	quiet(t, done, "Wait returned while Curator's barrier was set")
	java.Send("j1 simple %s remove", path)
	java.Expect("j1 removed")
	if err := recv(t, done, "Wait"); err != nil {
		t.Fatal(err)
	}

	// zkit sets, Curator waits.
	if err := gate.Set(ctx); err != nil {
		t.Fatal(err)
	}
	java.Send("j2 simple %s wait 300", path)
	java.Expect("j2 timeout")
	java.Send("j2 simple %s wait 60000", path)
	java.Quiet("zkit's barrier is set")
	if err := gate.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	java.Expect("j2 passed")
}
