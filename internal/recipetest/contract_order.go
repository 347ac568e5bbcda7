package recipetest

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// exclusion: 32 contenders on 8 sessions, 5 turns each, every turn a
// fenced read-modify-write of a counter through the holder's Multi.
func (q *contract[R, L]) exclusion(t *testing.T, b zktest.Backend) {
	const sessions, perSession, rounds = 8, 4, 5
	ctx := Context(t)
	admin := b.Connect(t)
	dir := LockDir(t, admin)
	counter := dir + "-counter"
	if _, err := admin.Create(ctx, counter, make([]byte, 8), client.Persistent); err != nil {
		t.Fatal(err)
	}
	var res Exclusion
	var wg sync.WaitGroup
	for s := range sessions {
		c := b.Connect(t)
		for g := range perSession {
			m := q.exclusive[(s*perSession+g)%len(q.exclusive)]
			p := q.participant(c, dir, 0)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					if err := q.fencedIncrement(ctx, m, p, c, dir, counter, &res); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if v := res.Violations(); len(v) > 0 {
		t.Fatalf("mutual exclusion violated %d times: %v", len(v), v[:min(5, len(v))])
	}
	data, _, err := admin.Get(ctx, counter)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := binary.BigEndian.Uint64(data), uint64(sessions*perSession*rounds); got != want {
		t.Fatalf("fenced counter = %d, want %d", got, want)
	}
	WaitChildren(t, admin, dir, 0)
}

// fencedIncrement takes one turn in mode m and adds one to counter with a
// write that only applies while the turn lasts.
func (q *contract[R, L]) fencedIncrement(ctx context.Context, m Mode[R, L], p R, c *client.Client, dir, counter string, res *Exclusion) error {
	l, err := m.Acquire(p, ctx)
	if err != nil {
		return err
	}
	res.Enter(l.Token())
	data, st, err := c.Get(ctx, counter)
	if err == nil {
		n := binary.BigEndian.Uint64(data) + 1
		_, err = l.Multi(ctx, client.SetOp(counter, binary.BigEndian.AppendUint64(nil, n), st.Version))
	}
	res.Leave()
	if rerr := q.Release(l, ctx); err == nil {
		err = rerr
	}
	return err
}

// fifo: waiters that join one after the other hold in that order.
func (q *contract[R, L]) fifo(t *testing.T, b zktest.Backend) {
	const waiters = 6
	ctx := Context(t)
	c := b.Connect(t)
	dir := LockDir(t, c)
	first := q.acquire(t, ctx, q.exclusive[0], c, dir, 0)
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range waiters {
		m := q.exclusive[i%len(q.exclusive)]
		p := q.participant(b.Connect(t), dir, 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := m.Acquire(p, ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if err := q.Release(l, ctx); err != nil {
				t.Error(err)
			}
		}()
		// The next waiter joins only once this one is in the queue.
		WaitChildren(t, c, dir, i+2)
	}
	q.release(t, ctx, first)
	wg.Wait()
	for i, w := range order {
		if w != i {
			t.Fatalf("held in order %v, want 0..%d", order, waiters-1)
		}
	}
}

// abandonedPredecessor: holder A, waiters B then C. B gives up; C, who
// watched B, must go on waiting for A.
func (q *contract[R, L]) abandonedPredecessor(t *testing.T, b zktest.Backend) {
	m := q.exclusive[0]
	ctx := Context(t)
	c := b.Connect(t)
	dir := LockDir(t, c)
	holder := q.acquire(t, ctx, m, c, dir, 0)
	bctx, cancelB := context.WithCancel(ctx)
	bDone := make(chan error, 1)
	pb := q.participant(b.Connect(t), dir, 0)
	go func() {
		_, err := m.Acquire(pb, bctx)
		bDone <- err
	}()
	WaitChildren(t, c, dir, 2)
	cc := b.Connect(t)
	sub := cc.Subscribe()
	defer sub.Close()
	var released atomic.Bool
	cHeld := make(chan *L, 1)
	pc := q.participant(cc, dir, 0)
	go func() {
		l, err := m.Acquire(pc, ctx)
		if err != nil {
			t.Error(err)
			cHeld <- nil
			return
		}
		if !released.Load() {
			t.Error("C held while the holder still held")
		}
		cHeld <- &l
	}()
	WaitChildren(t, c, dir, 3)
	bNodes := Children(t, c, dir)
	cancelB()
	if err := <-bDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled acquire returned %v", err)
	}
	// Wait until C has been told that the node it watched is gone (if C's
	// watch on it was set in time; otherwise C found it gone), and give C
	// time to (wrongly) take its turn.
	WaitEventFor(t, sub, zktest.Scale(time.Second), func(ev client.Event) bool {
		return ev.Type == client.EventNodeDeleted && hasChild(bNodes, ev.Path)
	})
	time.Sleep(zktest.Scale(100 * time.Millisecond))
	released.Store(true)
	q.release(t, ctx, holder)
	if l := <-cHeld; l != nil {
		q.release(t, ctx, *l)
	}
}

// hasChild reports whether path ends with "/" and one of names.
func hasChild(names []string, path string) bool {
	for _, n := range names {
		if strings.HasSuffix(path, "/"+n) {
			return true
		}
	}
	return false
}
