package inspect_test

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// kazooPeer is one kazoo recipe participant: it says "ready" and its
// session id once connected, joins (acquires, joins a party) in a thread,
// says "held" once it holds, and ends its session when its stdin closes.
const kazooPeer = `
import os, sys, threading
from kazoo.client import KazooClient
kind, path, ident = sys.argv[1], sys.argv[2], sys.argv[3]
zk = KazooClient(hosts=os.environ["ZK"])
zk.start()
print("ready", flush=True)
print("session", zk.client_id[0], flush=True)
if kind == "lock":
    r = zk.Lock(path, ident)
elif kind == "read":
    r = zk.ReadLock(path, ident)
elif kind == "write":
    r = zk.WriteLock(path, ident)
elif kind == "semaphore":
    r = zk.Semaphore(path, ident, max_leases=int(sys.argv[4]))
elif kind == "party":
    r = zk.Party(path, ident)
elif kind == "barrier":
    r = zk.DoubleBarrier(path, int(sys.argv[4]), ident)
def run():
    try:
        if kind == "party":
            r.join()
        elif kind == "barrier":
            r.enter()
        else:
            r.acquire()
        print("held", flush=True)
    except Exception:
        pass  # the session ended while waiting
threading.Thread(target=run, daemon=True).start()
sys.stdin.read()
zk.stop()
`

// startKazoo starts a kazoo participant and returns its session id and
// the peer, which says "held" once it holds. It ends when the test does.
func startKazoo(t *testing.T, b zktest.Backend, args ...string) (int64, *recipetest.CuratorPeer) {
	t.Helper()
	p := recipetest.StartKazoo(t, b.Servers, kazooPeer, args...)
	line := p.Next()
	id, err := strconv.ParseInt(strings.TrimPrefix(line, "session "), 10, 64)
	if err != nil {
		t.Fatalf("kazoo peer said %q, want its session", line)
	}
	return id, p
}

// kazoo's Lock is shown and marked, in its own order, and a zkit lock on
// the same path is shown holding beside it: they do not see each other.
func TestKazooLock(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		p := recipePath(t, c)
		k1, holder := startKazoo(t, b, "lock", p, "k-one")
		holder.Expect("held")
		k2, _ := startKazoo(t, b, "lock", p, "k-two")
		recipetest.WaitChildren(t, c, p, 2)

		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		h, w := r.Held(), r.Queued()
		if r.Kind != inspect.Lock || r.Origin != inspect.Kazoo {
			t.Fatalf("kind %q origin %q, want a kazoo lock", r.Kind, r.Origin)
		}
		if len(h) != 1 || h[0].Session != k1 || h[0].ID != "k-one" || h[0].Origin != inspect.Kazoo ||
			len(w) != 1 || w[0].Session != k2 || w[0].ID != "k-two" {
			t.Fatalf("holders %+v waiters %+v, want k-one holding, k-two waiting", h, w)
		}

		zl, err := lock.New(c, p).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r, err = inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sessions(r.Held()), []int64{k1, sessionOf(c)}; !slices.Equal(got, want) || r.Origin != "" || len(r.Notes) == 0 {
			t.Fatalf("holders' sessions %x origin %q notes %q, want %x, no common origin and a note", got, r.Origin, r.Notes, want)
		}
		if r.Held()[1].Token != zl.Token() || r.Held()[1].Origin != "" {
			t.Fatalf("zkit holder %+v, want token %d and zkit's layout", r.Held()[1], zl.Token())
		}
	})
}

// kazoo's ReadLock and WriteLock are a read/write lock, in order.
func TestKazooRWLock(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		p := recipePath(t, c)
		r1, reader := startKazoo(t, b, "read", p, "r1")
		reader.Expect("held")
		w1, _ := startKazoo(t, b, "write", p, "w1")
		recipetest.WaitChildren(t, c, p, 2)
		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		h, w := r.Held(), r.Queued()
		if r.Kind != inspect.RWLock || r.Origin != inspect.Kazoo || len(h) != 1 || h[0].Session != r1 || h[0].Mode != "read" ||
			len(w) != 1 || w[0].Session != w1 || w[0].Mode != "write" {
			t.Fatalf("kind %q origin %q holders %+v waiters %+v, want kazoo rwlock: r1 reading, w1 waiting to write", r.Kind, r.Origin, h, w)
		}
	})
}

// kazoo's Semaphore: its leases hold, its lock's nodes wait.
func TestKazooSemaphore(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		p := recipePath(t, c)
		s1, holder := startKazoo(t, b, "semaphore", p, "s1", "1")
		holder.Expect("held")
		s2, _ := startKazoo(t, b, "semaphore", p, "s2", "1")
		recipetest.WaitChildren(t, c, p+"-__lock__", 1)
		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		h, w := r.Held(), r.Queued()
		if r.Kind != inspect.Semaphore || r.Origin != inspect.Kazoo || len(h) != 1 || h[0].Session != s1 || h[0].ID != "s1" ||
			len(w) != 1 || w[0].Session != s2 {
			t.Fatalf("kind %q origin %q holders %+v waiters %+v, want kazoo semaphore: s1 holding, s2 waiting", r.Kind, r.Origin, h, w)
		}
	})
}

// kazoo's Party is a group, its members' ids in their data.
func TestKazooParty(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		p := recipePath(t, c)
		k, member := startKazoo(t, b, "party", p, "guest")
		member.Expect("held")
		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		ms := r.With(inspect.Member)
		if r.Kind != inspect.Group || r.Origin != inspect.Kazoo || len(ms) != 1 || ms[0].ID != "guest" || ms[0].Session != k {
			t.Fatalf("kind %q origin %q members %+v, want a kazoo party with guest", r.Kind, r.Origin, ms)
		}
	})
}

// A kazoo member of a double barrier is marked, beside a zkit member.
func TestKazooBarrier(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		p := recipePath(t, c)
		k, _ := startKazoo(t, b, "barrier", p, "kz", "3")
		recipetest.WaitChildren(t, c, p, 1)
		background(t, func(ctx context.Context) { barrier.NewDouble(c, p, 3).Enter(ctx) })
		recipetest.WaitChildren(t, c, p, 2)
		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		ms := r.With(inspect.Member)
		if r.Kind != inspect.Barrier || r.Origin != "" || len(ms) != 2 || r.Ready == nil || *r.Ready {
			t.Fatalf("kind %q origin %q members %+v ready %v, want a mixed barrier of 2 without ready", r.Kind, r.Origin, ms, r.Ready)
		}
		for _, m := range ms {
			switch m.Session {
			case k:
				if m.Origin != inspect.Kazoo || m.ID != "kz" {
					t.Fatalf("kazoo member %+v, want marked kazoo with id kz", m)
				}
			case sessionOf(c):
				if m.Origin != inspect.Zkit {
					t.Fatalf("zkit member %+v, want marked zkit", m)
				}
			default:
				t.Fatalf("member %+v of neither session", m)
			}
		}
	})
}

// Curator's InterProcessMutex shares zkit's layout: its nodes are marked
// by their data, and zkit's and Curator's waiters queue in one order.
func TestCuratorLock(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		p := recipePath(t, c)
		java := recipetest.StartCurator(t, b.Servers)
		java.Send("j1 mutex %s acquire", p)
		java.Expect("j1 acquired")
		background(t, func(ctx context.Context) { lock.New(c, p).Lock(ctx) })
		recipetest.WaitChildren(t, c, p, 2)
		java.Send("j2 mutex %s acquire", p)
		recipetest.WaitChildren(t, c, p, 3)

		r, err := inspect.Inspect(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		h, w := r.Held(), r.Queued()
		if r.Kind != inspect.Lock || len(h) != 1 || h[0].Origin != inspect.Curator || h[0].Session == 0 || h[0].Session == sessionOf(c) {
			t.Fatalf("kind %q holders %+v, want a lock held by Curator", r.Kind, h)
		}
		if net.ParseIP(h[0].ID) == nil {
			t.Fatalf("Curator's holder has id %q, want its host's address", h[0].ID)
		}
		if len(w) != 2 || w[0].Origin != "" || w[0].Session != sessionOf(c) || w[1].Origin != inspect.Curator {
			t.Fatalf("waiters %+v, want zkit then Curator", w)
		}
		java.Send("j1 mutex %s release", p)
		java.Expect("j1 released")
		inspectUntil(t, c, p, "zkit holds", func(r *inspect.Report) bool {
			h := r.Held()
			return len(h) == 1 && h[0].Session == sessionOf(c)
		})
	})
}

// Curator's InterProcessSemaphoreV2 and LeaderLatch share zkit's layouts:
// a Curator lease is marked by its data, and a Curator leader shows its id.
func TestCuratorSemaphoreAndLatch(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		sem := recipePath(t, c)
		java := recipetest.StartSemaphorePeer(t, b.Servers)
		java.Send("s1 acquire %s 1", sem)
		java.Expect("s1 acquired")
		background(t, func(ctx context.Context) { semaphore.New(c, sem, 1).Acquire(ctx) })
		recipetest.WaitChildren(t, c, sem+"/locks", 1)
		r, err := inspect.Inspect(ctx, c, sem)
		if err != nil {
			t.Fatal(err)
		}
		h, w := r.Held(), r.Queued()
		if r.Kind != inspect.Semaphore || len(h) != 1 || h[0].Origin != inspect.Curator || len(w) != 1 || w[0].Session != sessionOf(c) {
			t.Fatalf("kind %q holders %+v waiters %+v, want Curator's lease and zkit waiting", r.Kind, h, w)
		}

		latch := recipePath(t, c)
		leader := recipetest.StartLeaderLatch(t, b.Servers)
		leader.Send("j-leader start %s", latch)
		leader.Expect("j-leader leader")
		background(t, func(ctx context.Context) { election.New(c, latch, "go-candidate").Campaign(ctx) })
		recipetest.WaitChildren(t, c, latch, 2)
		r, err = inspect.Inspect(ctx, c, latch)
		if err != nil {
			t.Fatal(err)
		}
		l, cands := r.With(inspect.Leader), r.With(inspect.Candidate)
		if r.Kind != inspect.Election || len(l) != 1 || l[0].ID != "j-leader" || len(cands) != 1 || cands[0].ID != "go-candidate" {
			t.Fatalf("kind %q leader %+v candidates %+v, want j-leader leading, go-candidate waiting", r.Kind, l, cands)
		}
	})
}
