package semaphore_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// Acquire and AcquireN called after the session expired on the server,
// before the client noticed: they hold under the next session, and nothing
// of the old one is left.
func TestAcquireAfterUnnoticedExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(4*time.Second)))...)
		s := semaphore.New(c, path, 3)
		old := c.Session()
		cut()
		b.ExpireSession(t, old)
		type res struct {
			l   []*semaphore.Lease
			err error
		}
		out := make(chan res, 2)
		go func() {
			l, err := s.Acquire(ctx)
			out <- res{[]*semaphore.Lease{l}, err}
		}()
		go func() {
			l, err := s.AcquireN(ctx, 2)
			out <- res{l, err}
		}()
		recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := c.Suspended(); return s })
		heal()
		var all []*semaphore.Lease
		for range 2 {
			r := <-out
			if r.err != nil {
				t.Fatal(r.err)
			}
			all = append(all, r.l...)
		}
		for _, l := range all {
			if l.Session().ID() == old.ID() || l.Err() != nil {
				t.Fatalf("lease on 0x%x (old 0x%x): %v", l.Session().ID(), old.ID(), l.Err())
			}
		}
		if got := recipetest.Children(t, admin, path+"/leases"); len(got) != 3 {
			t.Fatalf("leases: %v", got)
		}
		for _, l := range all {
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		recipetest.WaitChildren(t, admin, path+"/leases", 0)
		recipetest.WaitChildren(t, admin, path+"/locks", 0)
	})
}

// The Multi that creates an attempt's lease node and releases its mutex
// is applied and loses its reply, and the session expires before the
// client reconnects: the attempt held nothing yet (its lease node went
// with the session), so it tries again under the next session and holds,
// with one lease node, and nothing of the old session is left.
func TestCreateReplyLostWithSession(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	r := leaseReplyLost(t, b, zktest.Scale(4*time.Second))
	old := r.c.Session()
	b.ExpireSession(t, old)
	r.p.Heal()
	l := got(t, r.out)[0]
	if l.Session().ID() == old.ID() || l.Err() != nil {
		t.Fatalf("lease on 0x%x (old 0x%x): %v", l.Session().ID(), old.ID(), l.Err())
	}
	waitNodes(t, r.admin, r.path, 1, 0)
	unlock(t, l)
	waitNodes(t, r.admin, r.path, 0, 0)
}

// replyLost is an Acquire under way whose lease node was created, with the
// reply to its Multi lost (see leaseReplyLost).
type replyLost struct {
	admin, c *client.Client // c acquires through p
	p        *zktest.Proxy
	path     string
	out      chan acquired
}

// leaseReplyLost starts an Acquire of a semaphore of one lease on a client
// with session timeout timeout, whose Multi that creates the lease node is
// applied and loses its reply, its connection blackholed then. It returns
// once the client is suspended.
func leaseReplyLost(t *testing.T, b zktest.Backend, timeout time.Duration) replyLost {
	ctx := recipetest.Context(t)
	r := replyLost{admin: b.Connect(t), p: zktest.NewProxy(t, b.Addr()), out: make(chan acquired, 1)}
	r.path = semPath(t, r.admin)
	r.c = b.Connect(t, client.WithDialer(r.p.Dialer()), client.WithSessionTimeout(timeout))
	if err := r.admin.EnsurePath(ctx, r.path+"/leases"); err != nil {
		t.Fatal(err)
	}
	b.Reference().DropReplyAfterCommit(func(op, path string) bool {
		if op == "multi" && strings.Contains(path, "/leases/") {
			r.p.Blackhole()
			return true
		}
		return false
	})
	go func() {
		l, err := semaphore.New(r.c, r.path, 1).Acquire(ctx)
		r.out <- acquired{[]*semaphore.Lease{l}, err}
	}()
	recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := r.c.Suspended(); return s })
	if got := recipetest.Children(t, r.admin, r.path+"/leases"); len(got) != 1 {
		t.Fatalf("leases after the lost reply: %v", got)
	}
	return r
}

// Two attempts of one client wait for a semaphore of one lease, which a
// holder holds: the first holding the mutex, waiting for room, the second
// queued for the mutex behind it; an attempt of another client queues
// behind both. The first client's session is lost (expired by the server,
// or cut off for longer than its timeout): its attempts held nothing, so
// they have lost only their places in line. They do not return; their
// mutex nodes go, and they queue again under the next session behind the
// other client's attempt, which takes the lease first once the holder
// releases; then they hold in turn, under the next session.
func TestWaiterSessionLoss(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		for _, how := range recipetest.SessionLosses {
			t.Run(how, func(t *testing.T) {
				ctx := recipetest.Context(t)
				admin := b.Connect(t)
				path := semPath(t, admin)
				c, lose := recipetest.LosableClient(t, b, how)
				holder, err := semaphore.New(admin, path, 1).Acquire(ctx)
				if err != nil {
					t.Fatal(err)
				}
				old := c.Session()
				s := semaphore.New(c, path, 1)
				first := acquireN(ctx, s, 1)
				waitNodes(t, admin, path, 1, 1)
				firstMutex := recipetest.Children(t, admin, path+"/locks")[0]
				second := acquireN(ctx, s, 1)
				waitNodes(t, admin, path, 1, 2)
				recipetest.WaitWatched(t, b, old, path+"/locks/"+firstMutex) // the second waits for the first
				oldMutex := recipetest.Children(t, admin, path+"/locks")
				later := acquireN(ctx, semaphore.New(b.Connect(t), path, 1), 1)
				waitNodes(t, admin, path, 1, 3)

				lose()
				recipetest.Eventually(t, "both attempts queued again under the next session", func() bool {
					pending(t, first, "an attempt whose session was lost")
					pending(t, second, "an attempt whose session was lost")
					now := recipetest.Children(t, admin, path+"/locks")
					return len(now) == 3 && !slices.ContainsFunc(now, func(n string) bool { return slices.Contains(oldMutex, n) })
				})

				unlock(t, holder)
				next := got(t, later)
				pending(t, first, "an attempt queued again behind the holder")
				pending(t, second, "an attempt queued again behind the holder")
				unlock(t, next...)
				for range 2 {
					var a acquired
					select {
					case a = <-first:
					case a = <-second:
					case <-ctx.Done():
						t.Fatal("an attempt queued again does not hold once the lease is free")
					}
					if a.err != nil {
						t.Fatalf("an attempt whose session was lost while it waited: %v, want it to hold under the next session", a.err)
					}
					if l := a.leases[0]; l.Session().ID() == old.ID() || l.Err() != nil || l.Token() <= next[0].Token() {
						t.Fatalf("lease on 0x%x (old 0x%x), token %d (before: %d): %v", l.Session().ID(), old.ID(), l.Token(), next[0].Token(), l.Err())
					}
					unlock(t, a.leases...)
				}
				waitNodes(t, admin, path, 0, 0)
			})
		}
	})
}

// The Multi that creates an attempt's lease node is applied and loses its
// reply, and the client then gives its session up while the server still
// keeps it (its timers reset, as a restart or a leader election does):
// the lease node lingers on the server, counted by everyone. The attempt,
// which held nothing, tries again under the next session, and the node of
// the old one is deleted under the new one, not left for the server's
// expiry: the attempt holds the only lease well before that.
func TestCreateReplyLostSessionGivenUp(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	ref := b.Reference()
	timeout := zktest.Scale(4 * time.Second)
	r := leaseReplyLost(t, b, timeout)
	old := recipetest.GiveUpSession(t, ref, r.p, r.c, timeout)
	r.p.Heal()
	healed := time.Now()
	select {
	case a := <-r.out:
		if a.err != nil {
			t.Fatal(a.err)
		}
		if l := a.leases[0]; l.Session().ID() == old.ID() || l.Err() != nil {
			t.Fatalf("lease on 0x%x (old 0x%x): %v", l.Session().ID(), old.ID(), l.Err())
		}
		unlock(t, a.leases...)
	case <-time.After(timeout / 2):
		t.Fatalf("no lease %v after healing: the lease node of the session given up still counts (server sessions %x, old %x; leases %q)",
			time.Since(healed), ref.Sessions(), old.ID(), recipetest.Children(t, r.admin, r.path+"/leases"))
	}
	waitNodes(t, r.admin, r.path, 0, 0)
}
