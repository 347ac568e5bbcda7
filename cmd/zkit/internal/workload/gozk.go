package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// The baselines: go-zookeeper used directly, as an application without
// zkit would, and as the anchors measured it.

var openACL = zk.WorldACL(zk.PermAll)

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// gozkConnect opens n go-zookeeper sessions (no cap: the baselines are
// run at the anchors' client counts) with the credentials auth, and waits
// until each has a session.
func gozkConnect(ctx context.Context, servers []string, n int, auth []Credential) ([]*zk.Conn, func(), error) {
	cs := make([]*zk.Conn, 0, n)
	closeAll := func() {
		for _, c := range cs {
			c.Close()
		}
	}
	for range n {
		c, events, err := zk.Connect(servers, SessionTimeout, zk.WithLogger(quiet{}), zk.WithLogInfo(false))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		cs = append(cs, c)
		if err := waitSession(ctx, events); err != nil {
			closeAll()
			return nil, nil, err
		}
		for _, a := range auth {
			if err := c.AddAuth(a.Scheme, a.Auth); err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("go-zookeeper auth %s: %w", a.Scheme, err)
			}
		}
	}
	return cs, closeAll, nil
}

func waitSession(ctx context.Context, events <-chan zk.Event) error {
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() {
					for range events {
					}
				}()
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("go-zookeeper connect: %w", ctx.Err())
		}
	}
}

// gozkConnectAt opens the go-zookeeper sessions of a point and creates a
// fresh path for it under p's root, at gozk/what.
func gozkConnectAt(ctx context.Context, p Point, what string) ([]*zk.Conn, string, func(), error) {
	cs, closeAll, err := gozkConnect(ctx, p.Servers, p.Clients, p.Auth)
	if err != nil {
		return nil, "", nil, err
	}
	path, err := gozkPath(cs[0], p.root(), what)
	if err != nil {
		closeAll()
		return nil, "", nil, err
	}
	return cs, path, closeAll, nil
}

// gozkPath creates a fresh path under root/gozk/what, and its parents.
func gozkPath(c *zk.Conn, root, what string) (string, error) {
	p := fmt.Sprintf("%s/gozk/%s/%d-%d", root, what, time.Now().UnixNano(), pathSeq.Add(1))
	var err error
	for range 10 { // again from the top when another run's cleanup removed an ancestor
		if err = gozkEnsure(c, p); !errors.Is(err, zk.ErrNoNode) {
			break
		}
	}
	return p, err
}

// gozkEnsure creates p and its ancestors, each unless it exists.
func gozkEnsure(c *zk.Conn, p string) error {
	cur := ""
	for _, part := range strings.Split(p[1:], "/") {
		cur += "/" + part
		if _, err := c.Create(cur, nil, 0, openACL); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// GozkLock is W1_lock on go-zookeeper's own zk.Lock.
func GozkLock() Spec { return gozkHandoffs("W1_lock", 0) }

// GozkLockShared is W1_lock_shared on zk.Lock: the point's clients are
// goroutines over SharedSessions sessions, each with a zk.Lock of its own.
func GozkLockShared() Spec { return shared(gozkHandoffs("W1_lock_shared", SharedSessions)) }

func gozkHandoffs(workload string, sessions int) Spec {
	return Spec{Workload: workload, Impl: "gozk.Lock", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		q := p
		if sessions > 0 {
			q.Clients = sessions
		}
		cs, path, closeAll, err := gozkConnectAt(ctx, q, "lock")
		if err != nil {
			return nil, err
		}
		locks := make([]*zk.Lock, p.Clients)
		for i := range locks {
			locks[i] = zk.NewLock(cs[i%len(cs)], path, openACL)
		}
		var ex exclusion
		return &Instance{
			Op: func(_ context.Context, i int) (time.Duration, error) {
				t0 := time.Now()
				if err := locks[i].Lock(); err != nil {
					return 0, err
				}
				lat := time.Since(t0)
				ex.enter()
				ex.leave()
				return lat, locks[i].Unlock()
			},
			Check: func(context.Context) []string { return []string{ex.note()} },
			Close: closeAll,
		}, nil
	}}
}

// GozkCounter is W2_counter on the naive loop: Get, then Set with the
// version read, again on ErrBadVersion (the paper's loop with no backoff,
// as the anchors ran it, with decimal text data).
func GozkCounter() Spec {
	return Spec{Workload: "W2_counter", Impl: "gozk.CASCounter", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		return gozkCounter(ctx, p)
	}}
}

// GozkSharedCounter is the same loop with every client a goroutine of one
// session (the baseline of SharedCounter).
func GozkSharedCounter() Spec {
	return Spec{Workload: "W2_counter_shared", Impl: "gozk.CASCounter", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		q := p
		q.Clients = 1
		return gozkCounter(ctx, q)
	}}
}

// gozkCounter sets up the naive loop on p.Clients sessions; client i uses
// session i modulo their number.
func gozkCounter(ctx context.Context, p Point) (*Instance, error) {
	cs, path, closeAll, err := gozkConnectAt(ctx, p, "counter")
	if err != nil {
		return nil, err
	}
	var done, conflicts atomic.Int64
	return &Instance{
		Op: func(_ context.Context, i int) (time.Duration, error) {
			c := cs[i%len(cs)]
			t0 := time.Now()
			for {
				data, st, err := c.Get(path)
				if err != nil {
					return 0, err
				}
				v, _ := strconv.ParseInt(string(data), 10, 64)
				_, err = c.Set(path, strconv.AppendInt(nil, v+1, 10), st.Version)
				if errors.Is(err, zk.ErrBadVersion) {
					conflicts.Add(1)
					continue
				}
				if err == nil {
					done.Add(1)
				}
				return time.Since(t0), err
			}
		},
		Check: func(context.Context) []string {
			data, _, err := cs[0].Get(path)
			v, _ := strconv.ParseInt(string(data), 10, 64)
			check := "ok"
			if err != nil || v != done.Load() {
				check = fmt.Sprintf("MISMATCH (%v)", err)
			}
			return []string{fmt.Sprintf("final=%d increments=%d %s bad_version_per_inc=%.2f",
				v, done.Load(), check, float64(conflicts.Load())/float64(max(done.Load(), 1)))}
		},
		Close: closeAll,
	}, nil
}

// GozkRaw is W4_createdelete on go-zookeeper.
func GozkRaw() Spec {
	return Spec{Workload: "W4_createdelete", Impl: "gozk.raw", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		cs, path, closeAll, err := gozkConnectAt(ctx, p, "raw")
		if err != nil {
			return nil, err
		}
		return &Instance{
			Op: func(_ context.Context, i int) (time.Duration, error) {
				node := fmt.Sprintf("%s/%d", path, i)
				t0 := time.Now()
				if _, err := cs[i].Create(node, nil, 0, openACL); err != nil {
					return 0, err
				}
				err := cs[i].Delete(node, -1)
				return time.Since(t0), err
			},
			Close: closeAll,
		}, nil
	}}
}

// GozkFailover is W5_failover on a leader election built on zk.Lock (the
// anchors' go election: go-zookeeper has no election recipe). Candidates
// loop: take the lock (lead), step down at once and rejoin at the back.
// One operation is one term; its latency runs from the previous leader's
// step-down to this term's start.
func GozkFailover() Spec {
	return Spec{Workload: "W5_failover", Impl: "gozk.Lock", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		cs, path, closeAll, err := gozkConnectAt(ctx, p, "failover")
		if err != nil {
			return nil, err
		}
		locks := make([]*zk.Lock, p.Clients)
		for i := range locks {
			locks[i] = zk.NewLock(cs[i], path, openACL)
		}
		var terms terms
		return &Instance{
			Op: func(_ context.Context, i int) (time.Duration, error) {
				if err := locks[i].Lock(); err != nil {
					return 0, err
				}
				lat := terms.begin()
				terms.end()
				return lat, locks[i].Unlock()
			},
			Check: func(context.Context) []string { return []string{terms.note()} },
			Close: closeAll,
		}, nil
	}}
}
