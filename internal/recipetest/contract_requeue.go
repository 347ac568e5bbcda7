package recipetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// waiterSessionLoss: in every mode, an attempt waiting behind a holder,
// with an exclusive attempt of another client queued behind it, whose
// session is lost while it waits: expired by the server, or cut off for
// longer than its timeout. It held nothing, so it has lost only its place
// in line: it does not return, its old node goes, and it queues again,
// with one node, under the next session, behind the attempt that was
// behind it. It holds once both ahead of it have released, with a token
// above theirs.
func (q *contract[R, L]) waiterSessionLoss(t *testing.T, b zktest.Backend) {
	for _, how := range SessionLosses {
		for _, m := range q.Modes {
			t.Run(how+"/"+m.Name, func(t *testing.T) {
				c, lose := LosableClient(t, b, how)
				q.requeueAfterLoss(t, b, m, c, func(*client.Session) { lose() }, 0)
			})
		}
	}
}

// waiterSessionGivenUp: an attempt whose client gives its session up
// while the server still keeps it (its timers reset, as a restart or a
// leader election does), so that its old node lingers on the server: it
// queues again under the next session, and the old node is deleted under
// that session well before the server would expire it, instead of
// keeping everybody behind it waiting for nobody. On the reference
// server only, which can restart.
func (q *contract[R, L]) waiterSessionGivenUp(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	timeout := zktest.Scale(4 * time.Second)
	for _, m := range q.Modes {
		t.Run(m.Name, func(t *testing.T) {
			p := zktest.NewProxy(t, b.Addr())
			c := b.Connect(t, client.WithDialer(p.Dialer()), client.WithSessionTimeout(timeout))
			q.requeueAfterLoss(t, b, m, c, func(*client.Session) {
				GiveUpSession(t, b.Reference(), p, c, timeout)
				p.Heal()
			}, timeout/2)
		})
	}
}

// requeueAfterLoss runs the test of waiterSessionLoss for mode m: the
// waiting attempt is on c, and lose makes c lose the session it waits
// under. With within set, the attempt's old node must be gone within that
// long after lose returns.
func (q *contract[R, L]) requeueAfterLoss(t *testing.T, b zktest.Backend, m Mode[R, L], c *client.Client, lose func(old *client.Session), within time.Duration) {
	type result struct {
		l   L
		err error
	}
	ctx := Context(t)
	admin := b.Connect(t)
	dir := LockDir(t, admin)
	// Tolerant, so that what a restart of the server does to the holder's
	// connection does not end its hold.
	holder := q.acquire(t, ctx, q.exclusive[0], admin, dir, time.Hour)
	old := c.Session()
	waited := make(chan result, 1)
	pw := q.participant(c, dir, 0)
	go func() {
		l, err := m.Acquire(pw, ctx)
		waited <- result{l, err}
	}()
	WaitChildren(t, admin, dir, 2)
	WaitWatched(t, b, old, holder.Node()) // waiting, not joining
	oldNode := ""
	for _, n := range Children(t, admin, dir) {
		if dir+"/"+n != holder.Node() {
			oldNode = n
		}
	}
	later := make(chan result, 1)
	pl := q.participant(b.Connect(t), dir, time.Hour)
	go func() {
		l, err := q.exclusive[0].Acquire(pl, ctx)
		later <- result{l, err}
	}()
	WaitChildren(t, admin, dir, 3)

	lose(old)
	lost := time.Now()
	// Queued again: the old node is gone, and one node of the client's
	// next session is there with the two others.
	var seen []string
	eventually(t, func() bool {
		select {
		case r := <-waited:
			t.Fatalf("%s: the waiting attempt returned (%v) after its session was lost, while the holder still held", m.Name, r.err)
		default:
		}
		seen = Children(t, admin, dir)
		if len(seen) != 3 || slices.Contains(seen, oldNode) {
			return false
		}
		sess := c.Session()
		if sess == nil || sess.ID() == old.ID() {
			return false
		}
		owned := 0
		for _, n := range seen {
			if _, st, err := admin.Exists(ctx, dir+"/"+n); err == nil && st != nil && st.EphemeralOwner == sess.ID() {
				owned++
			}
		}
		return owned == 1
	}, func() string {
		return fmt.Sprintf("%s: the attempt queued again under its next session (old node %s); the queue has %q", m.Name, oldNode, seen)
	})
	if within > 0 && time.Since(lost) > within {
		t.Fatalf("%s: the old node of the session given up went only after %v, want it deleted under the next session within %v", m.Name, time.Since(lost), within)
	}

	q.release(t, ctx, holder)
	var next result
	select {
	case next = <-later:
	case r := <-waited:
		t.Fatalf("%s: the attempt that queued again returned (%v) before the one now ahead of it", m.Name, r.err)
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatalf("%s: the attempt now first in line does not hold", m.Name)
	}
	if next.err != nil {
		t.Fatalf("%s: the attempt now first in line: %v", m.Name, next.err)
	}
	quiet := time.NewTimer(zktest.Scale(100 * time.Millisecond))
	defer quiet.Stop()
	select {
	case r := <-waited:
		t.Fatalf("%s: the attempt that queued again returned (%v) beside the one ahead of it", m.Name, r.err)
	case <-quiet.C:
	}
	q.release(t, ctx, next.l)
	var r result
	select {
	case r = <-waited:
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatalf("%s: the attempt that queued again does not hold once the queue is free", m.Name)
	}
	if r.err != nil {
		t.Fatalf("%s: the attempt whose session was lost while it waited: %v, want it to hold under the next session", m.Name, r.err)
	}
	if r.l.Session().ID() == old.ID() {
		t.Fatalf("%s: held under the lost session 0x%x", m.Name, old.ID())
	}
	if r.l.Token() <= next.l.Token() {
		t.Fatalf("%s: token %d not above the previous holder's %d", m.Name, r.l.Token(), next.l.Token())
	}
	q.release(t, ctx, r.l)
	WaitChildren(t, admin, dir, 0)
}
