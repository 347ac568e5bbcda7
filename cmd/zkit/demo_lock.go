package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
)

// lockContention: workers contend for one lock; each holder increments a
// counter znode with a fenced write. No two holders overlap, fencing tokens
// only grow, and no increment is lost or doubled.
func lockContention(ctx context.Context, d *demoEnv) (string, error) {
	want, rate, _, err := fencedIncrements(ctx, d, "lock", d.workers, 1)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d handoffs, %.0f/s, no overlap, tokens increasing, counter = %d", want, rate, want), nil
}

// lockCombining: the same with four goroutines on each of half as many
// clients, those of a client sharing one Lock with combining, so that
// most handoffs stay within a process.
func lockCombining(ctx context.Context, d *demoEnv) (string, error) {
	want, rate, local, err := fencedIncrements(ctx, d, "lock-combined", max(d.workers/2, 1), 4)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d handoffs (%d within a process), %.0f/s, no overlap, tokens increasing, counter = %d",
		want, local, rate, want), nil
}

// fencedIncrements runs lockWorker on goroutines goroutines of each of
// clients clients, those of a client sharing one Lock (combining when
// more than one), and checks the fence, the counter and that no lock node
// is left. It returns the handoffs, their rate and how many of them came
// from a holder of the same process.
func fencedIncrements(ctx context.Context, d *demoEnv, name string, clients, goroutines int) (handoffs int64, rate float64, local int64, err error) {
	cs, closeAll, err := d.connectAll(ctx, clients)
	if err != nil {
		return 0, 0, 0, err
	}
	defer closeAll()
	path, counter := d.path(name), d.path(name+"-counter")
	if err := cs[0].EnsurePath(ctx, path); err != nil {
		return 0, 0, 0, err
	}
	if _, err := cs[0].Create(ctx, counter, encode(0), client.Persistent); err != nil {
		return 0, 0, 0, err
	}
	var f fence
	d.startClock()
	errc := make(chan error, len(cs)*goroutines)
	for _, c := range cs {
		lk := lock.New(c, path)
		if goroutines > 1 {
			lk = lock.New(c, path, lock.WithCombining(goroutines))
		}
		for range goroutines {
			go func() { errc <- lockWorker(ctx, d, c, lk, counter, &f) }()
		}
	}
	for range cap(errc) {
		if err := <-errc; err != nil {
			return 0, 0, 0, err
		}
	}
	elapsed := d.stopClock()
	if err := f.err(); err != nil {
		return 0, 0, 0, err
	}
	data, _, err := cs[0].Get(ctx, counter)
	if err != nil {
		return 0, 0, 0, err
	}
	want := int64(cap(errc) * d.rounds)
	if got := decode(data); got != want {
		return 0, 0, 0, violationf("counter is %d after %d fenced increments", got, want)
	}
	if kids, _, err := cs[0].Children(ctx, path); err != nil || len(kids) != 0 {
		return 0, 0, 0, violationf("lock nodes left behind: %v (%v)", kids, err)
	}
	return want, float64(want) / elapsed.Seconds(), f.local(), nil
}

func lockWorker(ctx context.Context, d *demoEnv, c *client.Client, lk *lock.Lock, counter string, f *fence) error {
	for range d.rounds {
		lease, err := lk.Lock(ctx)
		if err != nil {
			return err
		}
		d.count(1)
		f.enter(lease.Token())
		data, st, err := c.Get(ctx, counter)
		if err == nil {
			_, err = lease.Multi(ctx, client.SetOp(counter, encode(decode(data)+1), st.Version))
		}
		f.leave()
		if uerr := lease.Unlock(ctx); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lockExpiry: the holder's session expires on the server. Its lease ends,
// its fenced write is refused, and the next waiter gets the lock with a
// higher token.
func lockExpiry(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, 2)
	if err != nil {
		return "", err
	}
	defer closeAll()
	path := d.path("expiry")
	held, err := lock.New(cs[0], path).Lock(ctx)
	if err != nil {
		return "", err
	}
	next := make(chan *lock.Lease, 1)
	errc := make(chan error, 1)
	go func() {
		l, err := lock.New(cs[1], path).Lock(ctx)
		if err != nil {
			errc <- err
			return
		}
		next <- l
	}()
	if err := waitFor(ctx, func() bool { kids, _, _ := cs[1].Children(ctx, path); return len(kids) == 2 }); err != nil {
		return "", fmt.Errorf("second waiter never queued: %w", err)
	}
	if err := d.expire(ctx, held.Session()); err != nil {
		return "", err
	}
	select {
	case <-held.Done():
	case <-ctx.Done():
		return "", violationf("lease did not end after its session expired")
	}
	var l2 *lock.Lease
	select {
	case l2 = <-next:
	case err := <-errc:
		return "", err
	case <-ctx.Done():
		return "", errors.New("the next waiter never got the lock")
	}
	defer l2.Unlock(ctx)
	// A zombie that has not noticed its expiry still sends its fenced
	// write: the server must refuse it on the guard. (held.Multi would
	// refuse it in-process, never asking the server.)
	_, err = cs[1].Multi(ctx, held.Guard(), client.SetOp(path, []byte("stale"), -1))
	var me *client.MultiError
	if !errors.As(err, &me) || me.Index != 0 {
		return "", violationf("the expired holder's fenced write: %v, want refused by its guard", err)
	}
	if l2.Token() <= held.Token() {
		return "", violationf("token went from %d to %d", held.Token(), l2.Token())
	}
	return fmt.Sprintf("lease ended (%v), next holder's token %d > %d, stale fenced write refused",
		held.Err(), l2.Token(), held.Token()), nil
}

// lockLostReply: the server applies the lock node's create but the reply
// never arrives (the step checks that the fault struck). The lock is still
// acquired with exactly one node.
func lockLostReply(ctx context.Context, d *demoEnv) (string, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	path := d.path("lost-reply")
	if err := c.EnsurePath(ctx, path); err != nil {
		return "", err
	}
	var dropped atomic.Bool
	d.srv.DropReplyAfterCommit(func(op, p string) bool {
		if !strings.HasPrefix(p, path+"/") {
			return false
		}
		dropped.Store(true)
		return true
	})
	defer d.srv.DropReplyAfterCommit(nil)
	lease, err := lock.New(c, path).Lock(ctx)
	if err != nil {
		return "", err
	}
	if !dropped.Load() {
		return "", violationf("the lock's create never reached the fault: no reply was dropped")
	}
	kids, _, err := c.Children(ctx, path)
	if err != nil {
		return "", err
	}
	if len(kids) != 1 || path+"/"+kids[0] != lease.Node() {
		return "", violationf("want exactly the lease's node, found %v", kids)
	}
	if err := lease.Unlock(ctx); err != nil {
		return "", err
	}
	return "reply dropped after commit; one node, adopted, then released", nil
}
