package counter_test

import (
	"encoding/binary"
	"errors"
	"math"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// contend runs adds Adds of 1 on each of the clients at once, and checks
// that the counter ends at the total with every value returned once.
func contend(t *testing.T, cs []*client.Client, path string, adds int) {
	t.Helper()
	ctx := recipetest.Context(t)
	var ty tally
	var wg sync.WaitGroup
	for _, c := range cs {
		k := counter.New(c, path)
		wg.Go(func() {
			for range adds {
				ty.add(k.Add(ctx, 1))
			}
		})
	}
	wg.Wait()
	if len(ty.other) > 0 || ty.unknown > 0 {
		t.Fatalf("errors: %v (%d unknown)", ty.other, ty.unknown)
	}
	final, err := counter.New(cs[0], path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ty.check(t, final)
	if final != int64(len(cs)*adds) {
		t.Fatalf("counter = %d, want %d", final, len(cs)*adds)
	}
}

// noChildren waits until the counter's node has no child left.
func noChildren(t *testing.T, c *client.Client, path string) {
	t.Helper()
	ctx := recipetest.Context(t)
	recipetest.Eventually(t, "no delta node left", func() bool {
		kids, _, err := c.Children(ctx, path)
		return err == nil && len(kids) == 0
	})
}

// Sessions whose writes lose leave their deltas, the writers apply them,
// and no delta node is left behind.
func TestDelegation(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		path := counterPath(t)
		var cs []*client.Client
		for range 4 {
			cs = append(cs, b.Connect(t))
		}
		contend(t, cs, path, 100)
		var delegated, applied int64
		for _, c := range cs {
			delegated += counter.Delegated(c, path)
			applied += counter.Applied(c, path)
		}
		if delegated == 0 || applied < delegated {
			t.Fatalf("4 sessions added 400 times: %d batches delegated, %d applied by others", delegated, applied)
		}
		noChildren(t, cs[0], path)
		t.Logf("%d batches delegated, %d deltas applied", delegated, applied)
	})
}

// A delta left by another client is applied after the writer's own calls,
// exactly once, with its result written into its node; one that would
// overflow is left alone.
func TestForeignDelta(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := counterPath(t)
		c, other := b.Connect(t), b.Connect(t)
		k := counter.New(c, path)
		if _, err := k.Add(ctx, 10); err != nil {
			t.Fatal(err)
		}
		leave := func(delta int64) string {
			p, err := other.Create(ctx, client.JoinPath(path, client.ProtectedName(client.NewProtectedID(), strconv.FormatInt(delta, 10)+"-add-")), nil, client.EphemeralSequential)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		five, huge := leave(5), leave(math.MaxInt64)
		k2 := counter.New(other, path) // a fresh engine: it reads the node, and sees the children
		v, err := k2.Add(ctx, 1)
		if err != nil || v != 11 {
			t.Fatalf("Add(1) = %d, %v; want 11: own calls first", v, err)
		}
		d, st := data(t, c, five)
		if st.Version != 1 || len(d) != 8 || binary.BigEndian.Uint64(d) != 16 {
			t.Fatalf("the delta of 5: version %d data %x, want version 1 and 16", st.Version, d)
		}
		if _, st := data(t, c, huge); st.Version != 0 {
			t.Fatalf("a delta that would overflow was applied (version %d)", st.Version)
		}
		if got, err := k.Get(ctx); err != nil || got != 16 {
			t.Fatalf("counter %d, %v; want 16", got, err)
		}
		// Applied once: a later write leaves it alone.
		if v, err := k2.Add(ctx, 1); err != nil || v != 17 {
			t.Fatalf("Add(1) = %d, %v; want 17", v, err)
		}
	})
}

// A delta nobody applies (the other writer is not zkit) is taken back,
// and the batch writes itself.
func TestDelegationTakenBack(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := counterPath(t)
		c, raw := b.Connect(t), b.Connect(t)
		k := counter.New(c, path)
		if err := k.Set(ctx, 0); err != nil {
			t.Fatal(err)
		}
		const rounds = 200
		var wg sync.WaitGroup
		var rawAdds int
		wg.Go(func() { // a naive read-and-write loop, as a client that applies no deltas
			for range rounds {
				for {
					d, st, err := raw.Get(ctx, path)
					if err != nil {
						t.Error(err)
						return
					}
					next := binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(d)+1)
					if _, err := raw.Set(ctx, path, next, st.Version); err == nil {
						rawAdds++
						break
					}
				}
			}
		})
		var ty tally
		for range rounds {
			ty.add(k.Add(ctx, 1))
		}
		wg.Wait()
		if len(ty.other) > 0 || ty.unknown > 0 {
			t.Fatalf("errors: %v (%d unknown)", ty.other, ty.unknown)
		}
		if got, err := k.Get(ctx); err != nil || got != int64(rounds+rawAdds) {
			t.Fatalf("counter %d, %v; want %d", got, err, rounds+rawAdds)
		}
		noChildren(t, c, path)
	})
}

// Where the node's ACL does not let writers create children, nobody can
// leave a delta: conflicts are paced instead.
func TestDelegationRefused(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		path := counterPath(t)
		acl := client.WorldACL(client.PermRead | client.PermWrite | client.PermDelete | client.PermAdmin)
		cs := []*client.Client{b.Connect(t), b.Connect(t), b.Connect(t)}
		// The parents get the ACL too, which would keep the counter from
		// being created in them: they are made beforehand.
		parent, _ := client.SplitPath(path)
		if err := cs[0].EnsurePath(recipetest.Context(t), parent); err != nil {
			t.Fatal(err)
		}
		if err := counter.New(cs[0], path, counter.WithACL(acl...)).Set(recipetest.Context(t), 0); err != nil {
			t.Fatal(err)
		}
		contend(t, cs, path, 50)
		for _, c := range cs {
			if n := counter.Delegated(c, path); n != 0 {
				t.Fatalf("%d batches delegated in a node nobody may create children in", n)
			}
		}
	})
}

// unresolved is an Add whose delta's create lost its reply: c (through
// p, with a short session timeout) adds 1 from a stale version, so that
// its batch leaves its delta, and the connection is cut once the delta's
// node is there. c cannot reconnect until reconnect is called. The Add's
// outcome is in v and err once done is closed.
type unresolved struct {
	admin, c *client.Client
	p        *zktest.Proxy
	path     string
	sess     *client.Session
	timeout  time.Duration
	refuse   atomic.Bool

	done chan struct{}
	v    int64
	err  error
}

// leaveUnresolved starts an unresolved Add and returns once its delta's
// node is there.
func leaveUnresolved(t *testing.T, b zktest.Backend) *unresolved {
	t.Helper()
	ctx := recipetest.Context(t)
	u := &unresolved{admin: b.Connect(t), path: counterPath(t), timeout: zktest.Scale(2 * time.Second), done: make(chan struct{})}
	u.p = zktest.NewProxy(t, b.Addr())
	var dials atomic.Int32
	dial := u.p.Dialer()
	u.c = b.Connect(t, client.WithSessionTimeout(u.timeout), client.WithDialer(func(network, addr string, d time.Duration) (net.Conn, error) {
		if dials.Add(1) > 1 && u.refuse.Load() {
			return nil, errors.New("refused by the test")
		}
		return dial(network, addr, d)
	}))
	k := counter.New(u.c, u.path)
	if _, err := k.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Another writer moves the counter on: k's next write (from its own
	// last version) loses, and its batch leaves its delta.
	if _, err := counter.New(u.admin, u.path).Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	flusherStopped(t, u.c, u.path)
	u.sess = u.c.Session()
	u.refuse.Store(true)
	u.p.CutAfterNextCreate(u.path + "/" + client.ProtectedPrefix)
	go func() { u.v, u.err = k.Add(ctx, 1); close(u.done) }()
	recipetest.WaitChildren(t, u.admin, u.path, 1)
	return u
}

func (u *unresolved) reconnect() { u.refuse.Store(false) }

// A delta whose create lost its reply, and whose session the client gave
// up before it could look the node up, may be in the node all the same
// (the server has not expired the session yet) and be applied by another
// writer: the batch must not write itself then. Its calls end with an
// error matching client.ErrOutcomeUnknown, and the delta counts once.
func TestDelegationCreateUnresolved(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		u := leaveUnresolved(t, b)
		// The delta's node is there, and k's client cannot reconnect:
		// another writer applies it.
		if v, err := counter.New(b.Connect(t), u.path).Add(ctx, 1); err != nil || v != 3 {
			t.Fatalf("the applying writer's Add(1) = %d, %v; want 3", v, err)
		}
		select {
		case <-u.sess.Done():
		case <-time.After(4 * u.timeout):
			t.Fatal("the client did not give up its session")
		}
		u.reconnect()
		recipetest.Within(t, u.done, "the Add returning")
		got, err := counter.New(u.admin, u.path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != 4 || !client.IsOutcomeUnknown(u.err) {
			t.Fatalf("Add(1) whose delta another writer applied = %d, %v; counter %d: want outcome unknown and 4 (applied once)", u.v, u.err, got)
		}
	})
}

// An Add whose outcome is unknown, its caller still waiting, was applied
// before it returned or never is: the delta's node, left by a session the
// client gave up and the server still has, is taken back before the Add
// returns, not applied by the next writer.
func TestDelegationCreateUnresolvedNotLater(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	u := leaveUnresolved(t, b)
	recipetest.GiveUpSession(t, b.Reference(), u.p, u.c, u.timeout)
	u.p.Heal()
	u.reconnect()
	recipetest.Within(t, u.done, "the Add returning")
	if !client.IsOutcomeUnknown(u.err) {
		t.Fatalf("Add(1) whose delta's create was not resolved = %d, %v; want outcome unknown", u.v, u.err)
	}
	if v, err := counter.New(b.Connect(t), u.path).Add(ctx, 1); err != nil || v != 3 {
		t.Fatalf("the next writer's Add(1) = %d, %v; want 3", v, err)
	}
	if got, err := counter.New(u.admin, u.path).Get(ctx); err != nil || got != 3 {
		t.Fatalf("counter %d, %v; want 3: the delta of an Add that had returned was applied after it", got, err)
	}
}
