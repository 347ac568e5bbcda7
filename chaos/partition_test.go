package chaos

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// Scenario 3: a client that holds the lock and the write lock, leads an
// election and sits in a double barrier is partitioned from the whole
// ensemble for longer than its session timeout. It must step down (its
// leases and its term end) before anyone else acquires or leads, and once
// the partition heals its late writes must be refused: by ZooKeeper (the
// guard of its lease or term fails) and by the fence (a higher token has
// written). The other member of the barrier, leaving, must not wait for it
// forever: it is told a member was lost; and the victim's own Leave says
// that its session was.
func longPartition(t *testing.T, e *env) Summary {
	const victimTimeout = 3 * time.Second
	admin := e.admin(t)
	prog := NewProgress()
	loads := []*lockLoad{
		newLockLoad(t, admin, "lock", nil, 0, NewHistory(), prog),
		newLockLoad(t, admin, "rwlock", nil, 0, NewHistory(), prog),
		newLockLoad(t, admin, "election", nil, 0, NewHistory(), prog),
	}
	sum := Summary{}
	lateRefused, lead := 0, time.Duration(1<<62)
	for round := range pick(1, 5) {
		ctx := testContext(t, 2*time.Minute)
		v := e.worker(t, 2*round, victimTimeout)
		c := e.worker(t, 2*round+1, 10*time.Second)
		// The victim holds every lock and leads, the contender queues
		// behind it.
		mine := map[*lockLoad]*held{}
		theirs := map[*lockLoad]chan *held{}
		for _, l := range loads {
			l.workers = append(l.workers, v, c)
			hd, err := l.take(ctx, v, false)
			if err != nil {
				t.Fatalf("%s: victim: %v", l.name, err)
			}
			hd.write(ctx)
			mine[l] = hd
			ch := make(chan *held, 1)
			theirs[l] = ch
			go func() {
				hd, err := l.take(ctx, c, false)
				if err != nil {
					t.Errorf("%s: contender: %v", l.name, err)
				}
				ch <- hd
			}()
			waitFor(t, 20*time.Second, "the contender queues", func() bool { return len(children(t, admin, l.dir)) == 2 })
		}
		vb, cb := enterBarrier(t, ctx, v, c, fmt.Sprintf("%s/barrier-%d", zktest.UniquePath(t), round))

		start := time.Now()
		v.r.Blackhole()
		sum.Faults++
		left := make(chan error, 1)
		go func() { left <- cb.Leave(ctx) }()
		var next []*held
		for _, l := range loads {
			var hd *held
			select {
			case hd = <-theirs[l]:
			case <-time.After(zktest.Scale(30 * time.Second)):
				t.Fatalf("%s: the contender did not acquire (lead) after the victim's session expired", l.name)
			}
			if hd == nil {
				t.FailNow()
			}
			hd.write(ctx) // the fence now knows the contender's higher token
			vh := mine[l]
			select {
			case <-vh.lost:
				lead = min(lead, time.Duration(hd.since-vh.lostAt))
				if vh.lostAt >= hd.since {
					t.Errorf("%s: the victim saw its loss %v after the contender acquired", l.name, time.Duration(vh.lostAt-hd.since))
					sum.Violations++
				}
			default:
				t.Errorf("%s: the contender acquired (led) while the victim still held (led)", l.name)
				sum.Violations++
			}
			next = append(next, hd)
		}
		select {
		case err := <-left:
			if !errors.Is(err, barrier.ErrMemberLost) {
				t.Errorf("barrier: the other member's Leave: %v, want ErrMemberLost", err)
				sum.Violations++
			}
		case <-time.After(zktest.Scale(30 * time.Second)):
			t.Errorf("barrier: the other member still waits in Leave after the victim's session expired")
			sum.Violations++
		}

		// Stay partitioned for twice the session timeout, then heal.
		time.Sleep(time.Until(start.Add(2 * zktest.Scale(victimTimeout))))
		healed := prog.Now()
		v.r.Heal()

		// The victim's late writes, as a client that ignores Done would
		// send them: to the fence with its old token, and to ZooKeeper
		// guarded by its old node (bypassing the lease's own check).
		for _, l := range loads {
			vh := mine[l]
			token := vh.lease.Token()
			call := l.h.Invoke(v.id, LockInput{Op: Write, Token: token})
			ok := l.fence.Write(token)
			call.Return(LockOutput{OK: ok})
			if ok {
				t.Errorf("%s: the fence accepted the victim's late write", l.name)
				sum.Violations++
			} else {
				lateRefused++
			}
			err := lateGuardedWrite(ctx, l, v, vh)
			switch {
			case err == nil:
				t.Errorf("%s: ZooKeeper accepted the victim's late guarded write", l.name)
				sum.Violations++
			case errors.Is(err, client.ErrNoNode):
				lateRefused++
			default:
				t.Errorf("%s: late guarded write: %v", l.name, err)
			}
			vh.release()
		}
		if err := vb.Leave(ctx); !errors.Is(err, recipes.ErrLost) {
			t.Errorf("barrier: the victim's Leave after its session expired: %v, want ErrLost", err)
			sum.Violations++
		}
		if v.c.Session() == v.first || v.first.Alive() {
			t.Errorf("the victim kept its session through a partition longer than its timeout")
		}
		// Recovery: once the contender is done, the victim (on its new
		// session) takes every lock again.
		for _, hd := range next {
			hd.release()
		}
		for _, l := range loads {
			hd, err := l.take(ctx, v, false)
			if err != nil {
				t.Fatalf("%s: the victim cannot lock again after the partition: %v", l.name, err)
			}
			l.prog.Done(l.name)
			hd.release()
		}
		sum.Recovery = max(sum.Recovery, prog.Recovery(healed))
	}
	for _, l := range loads {
		sum.Recipes = append(sum.Recipes, l.name)
		sum.Ops += l.h.Len()
		sum.Violations += checkHistory(t, l.name, l.h, l.model)
	}
	sum.Recipes = append(sum.Recipes, "barrier")
	sum.Held = fmt.Sprintf("victim stepped down at least %v before the next holder acquired or led; %d late writes refused (fence and guard); the other barrier member was told a member was lost, the victim that its session was",
		lead.Round(time.Millisecond), lateRefused)
	return sum
}

// enterBarrier has a and b enter a double barrier of two at path.
func enterBarrier(t *testing.T, ctx context.Context, a, b *worker, path string) (*barrier.Double, *barrier.Double) {
	t.Helper()
	da, db := barrier.NewDouble(a.c, path, 2), barrier.NewDouble(b.c, path, 2)
	entered := make(chan error, 1)
	go func() { entered <- da.Enter(ctx) }()
	if err := db.Enter(ctx); err != nil {
		t.Fatalf("barrier: enter: %v", err)
	}
	if err := <-entered; err != nil {
		t.Fatalf("barrier: enter: %v", err)
	}
	return da, db
}

// lateGuardedWrite sends a write guarded by hd's node straight to the
// server, as a holder that ignored Done would, retrying while the
// connection is down. It returns the server's verdict.
func lateGuardedWrite(ctx context.Context, l *lockLoad, w *worker, hd *held) error {
	token := hd.lease.Token()
	for {
		call := l.h.Invoke(w.id, LockInput{Op: Write, Token: token})
		_, err := w.c.Multi(ctx, hd.lease.Guard(), client.SetOp(l.data, binary.BigEndian.AppendUint64(nil, uint64(token)), -1))
		var me *client.MultiError
		switch {
		case err == nil:
			call.Return(LockOutput{OK: true})
			return nil
		case errors.As(err, &me):
			call.Return(LockOutput{OK: false})
			return err
		case ctx.Err() != nil:
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// children lists dir (nothing if it is missing).
// children lists dir after a sync, so that a client on a lagging server
// still sees every change made through the others before the call.
func children(t *testing.T, c *client.Client, dir string) []string {
	t.Helper()
	ctx := testContext(t, 20*time.Second)
	if err := c.Sync(ctx, dir); err != nil && !errors.Is(err, client.ErrNoNode) {
		t.Fatalf("sync %s: %v", dir, err)
	}
	ch, _, err := c.Children(ctx, dir)
	if err != nil && !errors.Is(err, client.ErrNoNode) {
		t.Fatalf("children %s: %v", dir, err)
	}
	return ch
}
