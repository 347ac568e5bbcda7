package recipetest

import (
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// reapEvery is how often the servers of the directory tests delete empty
// containers (ZooKeeper's default is a minute).
const reapEvery = 20 * time.Millisecond

// directory: in every mode, once the last node of the directory is gone
// the server deletes the directory; the next participant creates it again
// and holds with a higher token, although its sequence number starts over.
// Then contenders take turns while the server keeps deleting the
// directory whenever it is empty: every turn must be had, one at a time.
func (q *contract[R, L]) directory(t *testing.T) {
	zktest.EachBackendWith(t,
		[]zktest.Option{zktest.WithContainerCheckInterval(reapEvery)},
		[]zktest.ServerOption{zktest.ServerContainerCheckInterval(reapEvery)},
		func(t *testing.T, b zktest.Backend) {
			ctx := Context(t)
			c := b.Connect(t)
			for _, m := range q.Modes {
				dir := LockDir(t, c)
				first := q.acquire(t, ctx, m, c, dir, 0)
				q.release(t, ctx, first)
				waitGone(t, ctx, c, dir)
				again := q.acquire(t, ctx, m, c, dir, 0)
				if !strings.HasSuffix(again.Node(), "0000000000") {
					t.Fatalf("%s: %s is not the first node of a new directory", m.Name, again.Node())
				}
				if again.Token() <= first.Token() {
					t.Fatalf("%s: token %d in the new directory, not above %d in the old one", m.Name, again.Token(), first.Token())
				}
				q.release(t, ctx, again)
				waitGone(t, ctx, c, dir)
			}
			q.churn(t, b)
		})
}

// churn: contenders on their own sessions take turns with pauses between,
// so that the directory is often empty and deleted, at any moment of a
// participant's join.
func (q *contract[R, L]) churn(t *testing.T, b zktest.Backend) {
	const contenders, rounds = 4, 15
	ctx := Context(t)
	admin := b.Connect(t)
	dir := LockDir(t, admin)
	var res Exclusion
	var fresh atomic.Int64 // turns that found the directory new
	var wg sync.WaitGroup
	for i := range contenders {
		m := q.exclusive[i%len(q.exclusive)]
		p := q.participant(b.Connect(t), dir, 0)
		wg.Go(func() {
			for range rounds {
				l, err := m.Acquire(p, ctx)
				if err != nil {
					t.Error(err)
					return
				}
				res.Enter(l.Token())
				if strings.HasSuffix(l.Node(), "0000000000") {
					fresh.Add(1)
				}
				res.Leave()
				if err := q.Release(l, ctx); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Duration(rand.Int64N(int64(2 * reapEvery))))
			}
		})
	}
	wg.Wait()
	if v := res.Violations(); len(v) > 0 {
		t.Fatalf("exclusion violated while the directory was reaped: %v", v[:min(5, len(v))])
	}
	t.Logf("%d turns, %d of them in a directory created anew", contenders*rounds, fresh.Load())
	waitGone(t, ctx, admin, dir)
}

// directoryWithoutContainers: a server that answers a container create
// with Unimplemented (and closes the connection, as ZooKeeper before 3.5
// does) gets a persistent directory, which stays when empty.
func (q *contract[R, L]) directoryWithoutContainers(t *testing.T) {
	b := zktest.ReferenceBackend(t, zktest.ServerWithoutContainers())
	ctx := Context(t)
	c := b.Connect(t)
	for _, m := range q.Modes {
		dir := LockDir(t, c)
		l := q.acquire(t, ctx, m, c, dir, 0)
		q.release(t, ctx, l)
		WaitChildren(t, c, dir, 0)
		b.Reference().FastForward(time.Hour) // a reaper pass, and more
		if ok, _, err := c.Exists(ctx, dir); err != nil || !ok {
			t.Fatalf("%s: the persistent directory is gone (exists=%v, err=%v)", m.Name, ok, err)
		}
		q.release(t, ctx, q.acquire(t, ctx, m, c, dir, 0))
	}
}
