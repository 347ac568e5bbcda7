package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/zktest"
)

// demo is the main job: it starts the bundled reference server in-process,
// runs every recipe against it with concurrent workers and faults, and
// checks the invariants each recipe promises. It exits non-zero if any
// check fails.
func demo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	workers := fs.Int("workers", 8, "concurrent workers (each its own session) per recipe")
	rounds := fs.Int("rounds", 50, "acquisitions per worker")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *workers < 2 || *rounds < 1 {
		return fmt.Errorf("--workers must be at least 2 and --rounds at least 1")
	}
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Printf("zkit demo: reference ZooKeeper server on %s; %d workers × %d rounds\n", srv.Addr(), *workers, *rounds)

	d := &demoEnv{srv: srv, workers: *workers, rounds: *rounds}
	steps := []struct {
		name string
		run  func(ctx context.Context) (string, error)
	}{
		{"lock: mutual exclusion and fencing", d.lockContention},
		{"lock: holder's session expires", d.lockExpiry},
		{"lock: create reply lost", d.lockLostReply},
		{"rwlock: readers share, writers exclude", d.rwlockContention},
		{"rwlock: upgrade refused, not deadlocked", d.rwlockUpgrade},
	}
	failed := 0
	for _, s := range steps {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		start := time.Now()
		summary, err := s.run(ctx)
		cancel()
		if err != nil {
			failed++
			fmt.Printf("FAIL %-40s %v\n", s.name, err)
			continue
		}
		fmt.Printf("ok   %-40s %s (%v)\n", s.name, summary, time.Since(start).Round(time.Millisecond))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d checks failed", failed, len(steps))
	}
	fmt.Printf("all %d checks passed\n", len(steps))
	return nil
}

type demoEnv struct {
	srv     *zktest.Server
	workers int
	rounds  int
}

func (d *demoEnv) connect(ctx context.Context, opts ...client.Option) (*client.Client, error) {
	return client.Connect(ctx, d.srv.Servers(), opts...)
}

// connectAll opens n clients, each its own session.
func (d *demoEnv) connectAll(ctx context.Context, n int) ([]*client.Client, func(), error) {
	cs := make([]*client.Client, 0, n)
	closeAll := func() {
		for _, c := range cs {
			c.Close()
		}
	}
	for range n {
		c, err := d.connect(ctx)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		cs = append(cs, c)
	}
	return cs, closeAll, nil
}

// fence is a resource that only accepts work from the current lock holder:
// it counts holders inside and refuses tokens lower than one it has seen.
type fence struct {
	inside     atomic.Int32
	mu         sync.Mutex
	last       int64
	violations []string
}

func (f *fence) enter(token int64) {
	if n := f.inside.Add(1); n != 1 {
		f.violate("%d holders at once", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if token <= f.last {
		f.violations = append(f.violations, fmt.Sprintf("token %d after %d", token, f.last))
	}
	f.last = token
}

func (f *fence) leave() { f.inside.Add(-1) }

func (f *fence) violate(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
}

func (f *fence) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.violations) == 0 {
		return nil
	}
	return fmt.Errorf("%d violations, first: %s", len(f.violations), f.violations[0])
}

// lockContention: workers contend for one lock; each holder increments a
// counter znode with a fenced write. No two holders overlap, fencing tokens
// only grow, and no increment is lost or doubled.
func (d *demoEnv) lockContention(ctx context.Context) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	const path, counter = "/demo/lock", "/demo/lock-counter"
	if err := cs[0].EnsurePath(ctx, path); err != nil {
		return "", err
	}
	if _, err := cs[0].Create(ctx, counter, encode(0), client.Persistent); err != nil {
		return "", err
	}
	var f fence
	start := time.Now()
	errc := make(chan error, len(cs))
	for _, c := range cs {
		go func() { errc <- d.lockWorker(ctx, c, path, counter, &f) }()
	}
	for range cs {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	elapsed := time.Since(start)
	if err := f.err(); err != nil {
		return "", err
	}
	data, _, err := cs[0].Get(ctx, counter)
	if err != nil {
		return "", err
	}
	want := int64(d.workers * d.rounds)
	if got := decode(data); got != want {
		return "", fmt.Errorf("counter is %d after %d fenced increments", got, want)
	}
	if kids, _, err := cs[0].Children(ctx, path); err != nil || len(kids) != 0 {
		return "", fmt.Errorf("lock nodes left behind: %v (%v)", kids, err)
	}
	return fmt.Sprintf("%d handoffs, %.0f/s, no overlap, tokens increasing, counter = %d", want,
		float64(want)/elapsed.Seconds(), want), nil
}

func (d *demoEnv) lockWorker(ctx context.Context, c *client.Client, path, counter string, f *fence) error {
	lk := lock.New(c, path)
	for range d.rounds {
		lease, err := lk.Lock(ctx)
		if err != nil {
			return err
		}
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
func (d *demoEnv) lockExpiry(ctx context.Context) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, 2)
	if err != nil {
		return "", err
	}
	defer closeAll()
	const path = "/demo/expiry"
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
	d.srv.ExpireSession(held.Session().ID())
	select {
	case <-held.Done():
	case <-ctx.Done():
		return "", errors.New("lease did not end after its session expired")
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
	if _, err := held.Multi(ctx, client.SetOp(path, []byte("stale"), -1)); err == nil {
		return "", errors.New("a fenced write of the expired holder was accepted")
	}
	if l2.Token() <= held.Token() {
		return "", fmt.Errorf("token went from %d to %d", held.Token(), l2.Token())
	}
	return fmt.Sprintf("lease ended (%v), next holder's token %d > %d, stale fenced write refused",
		held.Err(), l2.Token(), held.Token()), nil
}

// lockLostReply: the server applies the lock node's create but the reply
// never arrives. The lock is still acquired with exactly one node.
func (d *demoEnv) lockLostReply(ctx context.Context) (string, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	const path = "/demo/lost-reply"
	if err := c.EnsurePath(ctx, path); err != nil {
		return "", err
	}
	d.srv.DropReplyAfterCommit(func(op, p string) bool { return strings.HasPrefix(p, path+"/") })
	lease, err := lock.New(c, path).Lock(ctx)
	if err != nil {
		return "", err
	}
	kids, _, err := c.Children(ctx, path)
	if err != nil {
		return "", err
	}
	if len(kids) != 1 || path+"/"+kids[0] != lease.Node() {
		return "", fmt.Errorf("want exactly the lease's node, found %v", kids)
	}
	if err := lease.Unlock(ctx); err != nil {
		return "", err
	}
	return "reply dropped after commit; one node, adopted, then released", nil
}

// rwlockContention: half the workers read, half write. A writer is always
// alone; readers only ever overlap other readers.
func (d *demoEnv) rwlockContention(ctx context.Context) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers)
	if err != nil {
		return "", err
	}
	defer closeAll()
	const path = "/demo/rwlock"
	var readers, writers, maxReaders atomic.Int32
	var f fence // writers' tokens only ever grow
	errc := make(chan error, len(cs))
	for i, c := range cs {
		write := i%2 == 0
		go func() {
			rw := rwlock.New(c, path)
			for range d.rounds {
				var lease *rwlock.Lease
				var err error
				if write {
					lease, err = rw.Lock(ctx)
				} else {
					lease, err = rw.RLock(ctx)
				}
				if err != nil {
					errc <- err
					return
				}
				if write {
					f.enter(lease.Token())
					if w, r := writers.Add(1), readers.Load(); w != 1 || r != 0 {
						f.violate("writer with %d writers and %d readers inside", w, r)
					}
					writers.Add(-1)
					f.leave()
				} else {
					r := readers.Add(1)
					for m := maxReaders.Load(); r > m && !maxReaders.CompareAndSwap(m, r); m = maxReaders.Load() {
					}
					if w := writers.Load(); w != 0 {
						f.violate("reader with %d writers inside", w)
					}
					time.Sleep(time.Millisecond) // hold a moment: readers overlap
					if w := writers.Load(); w != 0 {
						f.violate("reader with %d writers inside", w)
					}
					readers.Add(-1)
				}
				if err := lease.Unlock(ctx); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for range cs {
		if err := <-errc; err != nil {
			return "", err
		}
	}
	if err := f.err(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d acquisitions, writers alone, up to %d readers at once", d.workers*d.rounds, maxReaders.Load()), nil
}

// rwlockUpgrade: asking for the write lock while holding the read lock of
// the same participant is an error at once, not a deadlock.
func (d *demoEnv) rwlockUpgrade(ctx context.Context) (string, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	rw := rwlock.New(c, "/demo/upgrade")
	r, err := rw.RLock(ctx)
	if err != nil {
		return "", err
	}
	defer r.Unlock(ctx)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := rw.Lock(wctx); !errors.Is(err, rwlock.ErrUpgrade) {
		return "", fmt.Errorf("upgrade returned %v, want rwlock.ErrUpgrade", err)
	}
	return "ErrUpgrade returned at once", nil
}

func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

func encode(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func decode(b []byte) int64 {
	if len(b) != 8 {
		return -1
	}
	return int64(binary.BigEndian.Uint64(b))
}
