package recipes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

var mutex = recipes.AcquireOptions{Kind: recipes.MutexKind}

func newCombiner(t *testing.T, c *client.Client, dir string, max int) *recipes.Combiner {
	t.Helper()
	cb, err := recipes.NewCombiner(recipes.NewQueue(c, dir, nil, recipes.MutexKind), max)
	if err != nil {
		t.Fatal(err)
	}
	return cb
}

// acquireLater starts an Acquire and waits until it waits behind the
// holder in the process.
func acquireLater(t *testing.T, ctx context.Context, cb *recipes.Combiner) <-chan result {
	t.Helper()
	before := cb.Waiting()
	out := acquire(ctx, cb.Acquire)
	recipetest.Eventually(t, "the caller waits behind the holder", func() bool { return cb.Waiting() > before })
	return out
}

// acquire runs fn (a Combiner's or a Queue's Acquire) in the background.
func acquire(ctx context.Context, fn func(context.Context, recipes.AcquireOptions) (*recipes.Lease, error)) <-chan result {
	out := make(chan result, 1)
	go func() {
		l, err := fn(ctx, mutex)
		out <- result{l, err}
	}()
	return out
}

// ended waits until l has ended and returns why.
func ended(t *testing.T, ctx context.Context, l *recipes.Lease, what string) error {
	t.Helper()
	select {
	case <-l.Done():
		return l.Err()
	case <-ctx.Done():
		t.Fatal(what)
		return nil
	}
}

type result struct {
	l   *recipes.Lease
	err error
}

// hold acquires through cb, failing the test on an error.
func hold(t *testing.T, ctx context.Context, cb *recipes.Combiner) *recipes.Lease {
	t.Helper()
	l, err := cb.Acquire(ctx, mutex)
	return result{l, err}.must(t)
}

func (r result) must(t *testing.T) *recipes.Lease {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.l
}

// Unlock hands the node to the next local caller: same node, the next
// token, no request; the one that unlocked is fenced at once.
func TestCombinerHandsOverLocally(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		data := dir + "-data"
		if _, err := c.Create(ctx, data, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		cb := newCombiner(t, c, dir, 4)
		a := hold(t, ctx, cb)
		if a.Token()%recipes.MaxHolders != 0 {
			t.Fatalf("the node's first holder has token %d, not a multiple of %d", a.Token(), recipes.MaxHolders)
		}
		next := acquireLater(t, ctx, cb)
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		bl := (<-next).must(t)
		if bl.Node() != a.Node() || bl.Token() != a.Token()+1 {
			t.Fatalf("handed over: node %s token %d, after node %s token %d", bl.Node(), bl.Token(), a.Node(), a.Token())
		}
		if got := recipetest.Children(t, c, dir); len(got) != 1 {
			t.Fatalf("the directory holds %v, want the one shared node", got)
		}
		if _, err := a.Multi(ctx, client.SetOp(data, []byte("a"), -1)); !errors.Is(err, recipes.ErrReleased) {
			t.Fatalf("a fenced write after the hand-over: %v, want ErrReleased", err)
		}
		if _, err := bl.Multi(ctx, client.SetOp(data, []byte("b"), -1)); err != nil {
			t.Fatal(err)
		}
		if got, _, err := c.Get(ctx, data); err != nil || string(got) != "b" {
			t.Fatalf("data %q, %v: want the holder's write alone", got, err)
		}
		if err := bl.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		recipetest.Eventually(t, "the node released", func() bool { return len(recipetest.Children(t, c, dir)) == 0 })
	})
}

// A Multi that a holder started before its Unlock has reached the server
// before the node passes to the next local holder: the hand-over waits for
// it, so the next holder never runs while the last one's fenced write is
// still on its way.
func TestCombinerHandOverWaitsForMulti(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		p := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(p.Dialer()))
		dir := recipetest.LockDir(t, admin)
		data := dir + "-data"
		if _, err := admin.Create(ctx, data, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		cb := newCombiner(t, c, dir, 4)
		a := hold(t, ctx, cb)
		next := acquireLater(t, ctx, cb)
		// Slow the holder's link: its Multi is on the way for a while.
		p.SetLatency(zktest.Scale(300 * time.Millisecond))
		sent := p.Requests()
		wrote := make(chan error, 1)
		go func() {
			_, err := a.Multi(ctx, client.SetOp(data, []byte("a"), -1))
			wrote <- err
		}()
		recipetest.Eventually(t, "the holder's Multi was sent", func() bool { return p.Requests() > sent })
		unlocked := make(chan error, 1)
		go func() { unlocked <- a.Unlock(ctx) }()
		bl := (<-next).must(t)
		// The next holder holds: the last one's write must be in already.
		if got, _, err := admin.Get(ctx, data); err != nil || string(got) != "a" {
			t.Fatalf("the next local holder holds while the last one's Multi is still on its way (data %q, %v)", got, err)
		}
		if err := <-wrote; err != nil {
			t.Fatalf("a Multi started while held: %v", err)
		}
		if err := <-unlocked; err != nil {
			t.Fatal(err)
		}
		p.SetLatency(0)
		if err := bl.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A node serves at most max holders: a remote waiter queued behind it
// holds before a local caller that came after the node was full.
func TestCombinerBoundsLocalTurns(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c, remote := b.Connect(t), b.Connect(t)
		dir := recipetest.LockDir(t, c)
		cb := newCombiner(t, c, dir, 2)
		first := hold(t, ctx, cb)
		theirs := acquire(ctx, recipes.NewQueue(remote, dir, nil, recipes.MutexKind).Acquire)
		recipetest.Eventually(t, "the remote waiter queued", func() bool { return len(recipetest.Children(t, c, dir)) == 2 })
		second := acquireLater(t, ctx, cb)
		if err := first.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		held := (<-second).must(t)
		third := acquire(ctx, cb.Acquire)
		recipetest.Eventually(t, "the third local caller queued a node of its own", func() bool {
			return len(recipetest.Children(t, c, dir)) == 3
		})
		if err := held.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		r := (<-theirs).must(t)
		if r.Token() <= held.Token() {
			t.Fatalf("the remote waiter's token %d after the local %d", r.Token(), held.Token())
		}
		select {
		case l := <-third:
			t.Fatalf("the third local caller held (%v) while the remote waiter did", l.err)
		default:
		}
		if err := r.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		l := (<-third).must(t)
		if l.Token() <= r.Token() {
			t.Fatalf("the third local caller's token %d after the remote %d", l.Token(), r.Token())
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A lost node ends its holder's lease; the callers waiting behind it queue
// again and hold under the next session, with a higher token.
func TestCombinerNodeLost(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		cb := newCombiner(t, c, dir, 4)
		a := hold(t, ctx, cb)
		next := acquireLater(t, ctx, cb)
		b.ExpireSession(t, a.Session())
		if err := ended(t, ctx, a, "the holder's lease outlived its session"); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("the holder's lease ended with %v, want ErrLost", err)
		}
		bl := (<-next).must(t)
		if bl.Node() == a.Node() || bl.Token() <= a.Token() || bl.Session() == a.Session() {
			t.Fatalf("after the loss: node %s token %d, before: node %s token %d", bl.Node(), bl.Token(), a.Node(), a.Token())
		}
		if err := a.Unlock(ctx); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("Unlock of the lost lease: %v", err)
		}
		if err := bl.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A cancelled local caller leaves its place to the next one; a cancelled
// first caller, still queued on the server, leaves its node, and those
// behind it queue again.
func TestCombinerCancel(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c, remote := b.Connect(t), b.Connect(t)
		dir := recipetest.LockDir(t, c)
		r, err := recipes.NewQueue(remote, dir, nil, recipes.MutexKind).Acquire(ctx, mutex)
		if err != nil {
			t.Fatal(err)
		}
		cb := newCombiner(t, c, dir, 4)
		firstCtx, cancelFirst := context.WithCancel(ctx)
		first := acquire(firstCtx, cb.Acquire)
		recipetest.Eventually(t, "the first caller queued", func() bool { return len(recipetest.Children(t, c, dir)) == 2 })
		lateCtx, cancelLate := context.WithCancel(ctx)
		late := acquireLater(t, lateCtx, cb)
		last := acquireLater(t, ctx, cb)
		cancelLate()
		if r := <-late; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("a cancelled local caller: %v", r.err)
		}
		cancelFirst()
		if r := <-first; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("a cancelled first caller: %v", r.err)
		}
		if err := r.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		l := (<-last).must(t)
		if got := recipetest.Children(t, c, dir); len(got) != 1 || l.Token() <= r.Token() {
			t.Fatalf("the last caller holds with token %d after %d; the directory holds %v", l.Token(), r.Token(), got)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// The node's watch outlives its first holder: a foreign delete after a
// local hand-over ends the holder of the moment.
func TestCombinerForeignDeleteAfterHandOver(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c, other := b.Connect(t), b.Connect(t)
		dir := recipetest.LockDir(t, c)
		cb := newCombiner(t, c, dir, 4)
		a := hold(t, ctx, cb)
		next := acquireLater(t, ctx, cb)
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		bl := (<-next).must(t)
		if err := other.Delete(ctx, bl.Node(), -1); err != nil {
			t.Fatal(err)
		}
		if err := ended(t, ctx, bl, "the holder's lease outlived its node"); !errors.Is(err, recipes.ErrNodeDeleted) {
			t.Fatalf("the holder's lease ended with %v, want ErrNodeDeleted", err)
		}
		if !errors.Is(a.Err(), recipes.ErrReleased) {
			t.Fatalf("the first holder's lease: %v, want ErrReleased", a.Err())
		}
		// The lock is free again for whoever comes next.
		l := hold(t, ctx, cb)
		if l.Node() == bl.Node() || l.Token() <= bl.Token() {
			t.Fatalf("after the delete: node %s token %d, before: node %s token %d", l.Node(), l.Token(), bl.Node(), bl.Token())
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Curator's InterProcessMutex queued directly behind a combined node waits
// while the node passes between local holders, and takes the lock on the
// last one's release; a combining caller queued directly behind Curator
// takes it on Curator's plain delete.
func TestCombinerCuratorInterop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		dir := recipetest.LockDir(t, c)
		java := recipetest.StartCurator(t, b.Servers)
		cb := newCombiner(t, c, dir, 4)
		a := hold(t, ctx, cb)
		java.Send("j1 mutex %s acquire", dir)
		recipetest.WaitChildren(t, c, dir, 2)
		next := acquireLater(t, ctx, cb)
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		bl := (<-next).must(t)
		java.Quiet("the node passed between zkit's local holders")
		if err := bl.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		java.Expect("j1 acquired")

		// A combining caller behind Curator: a node of its own.
		after := acquire(ctx, cb.Acquire)
		recipetest.WaitChildren(t, c, dir, 2)
		java.Quiet("zkit waits behind Curator")
		java.Send("j1 mutex %s release", dir)
		java.Expect("j1 released")
		l := (<-after).must(t)
		if l.Token() <= bl.Token() {
			t.Fatalf("zkit's token %d after Curator, %d before it", l.Token(), bl.Token())
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		recipetest.WaitChildren(t, c, dir, 0)
	})
}

func TestCombinerInput(t *testing.T) {
	c := zktest.ReferenceBackend(t).Connect(t)
	for _, n := range []int{-1, 0, 1, recipes.MaxHolders + 1} {
		_, err := recipes.NewCombiner(recipes.NewQueue(c, "/x", nil, recipes.MutexKind), n)
		var input *client.InputError
		if !errors.As(err, &input) {
			t.Errorf("%d holders a node: %v, want an *client.InputError", n, err)
		}
	}
}
