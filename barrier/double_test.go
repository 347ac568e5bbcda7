package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/logtest"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// member is one participant of a test, on a session of its own.
type member struct {
	c *client.Client
	d *barrier.Double
}

func newMembers(t *testing.T, b zktest.Backend, path string, count, n int, opts ...barrier.Option) []member {
	ms := make([]member, n)
	for i := range ms {
		c := b.Connect(t)
		ms[i] = member{c: c, d: barrier.NewDouble(c, path, count, opts...)}
	}
	return ms
}

// Nobody gets through Enter before count members are in, and nobody out of
// Leave before every member has left, whether the straggler inside is the
// lowest member (the one the others wait for) or not. The same path and
// the same Doubles serve both rounds.
func TestThresholds(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const n = 4
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		ms := newMembers(t, b, path, n, n)
		for round, hold := range []string{"lowest", "highest"} {
			var entering, leaving atomic.Int32
			entered := make(chan int, n)
			left := make(chan int, n)
			gates := make([]chan struct{}, n)
			for i, m := range ms {
				gates[i] = make(chan struct{})
				go func() {
					entering.Add(1)
					if err := m.d.Enter(ctx); err != nil {
						t.Errorf("round %d: member %d: Enter: %v", round, i, err)
						return
					}
					if got := entering.Load(); got != n {
						t.Errorf("round %d: member %d entered while %d of %d had called Enter", round, i, got, n)
					}
					entered <- i
					<-gates[i]
					leaving.Add(1)
					if err := m.d.Leave(ctx); err != nil {
						t.Errorf("round %d: member %d: Leave: %v", round, i, err)
					}
					if got := leaving.Load(); got != n {
						t.Errorf("round %d: member %d left while %d of %d had called Leave", round, i, got, n)
					}
					left <- i
				}()
				if i < n-1 {
					waitMembers(t, admin, path, i+1)
					quiet(t, entered, fmt.Sprintf("round %d: an Enter returned with %d of %d members in", round, i+1, n))
				}
			}
			nodes := map[string]int{}
			for range n {
				i := recv(t, entered, "every member to enter")
				nodes[ms[i].d.Node()] = i
			}
			names := make([]string, 0, n)
			for node := range nodes {
				names = append(names, node)
			}
			slices.Sort(names)
			held := nodes[names[0]]
			if hold == "highest" {
				held = nodes[names[n-1]]
			}
			for i := range ms {
				if i != held {
					close(gates[i])
				}
			}
			// The others have deleted their nodes, except the lowest one,
			// which waits for the straggler.
			recipetest.Eventually(t, "the other members started leaving", func() bool { return len(members(t, admin, path)) <= 2 })
			quiet(t, left, fmt.Sprintf("round %d: a Leave returned while the %s member was inside", round, hold))
			close(gates[held])
			for range n {
				recv(t, left, "every member to leave")
			}
			if got := recipetest.Children(t, admin, path); len(got) != 0 {
				t.Fatalf("round %d: left behind: %v", round, got)
			}
		}
	})
}

// The stranding that hangs kazoo's and Curator's double barriers on an
// ensemble: the slow member's node is counted by a fast member, which
// opens the barrier; the fast members pass and start leaving before the
// slow member counts, so it counts fewer than count members. It must go
// through on the ready event all the same.
//
// The scenario is made with latency on the slow member's connection; on a
// loaded machine the slow member may still count every member (then there
// was nothing to strand it), and the round is played again, at most 5
// times.
func TestSlowMemberNotStranded(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const n, rounds = 4, 5
		for round := 1; ; round++ {
			counted := slowMemberRound(t, b, n)
			if len(counted) == 1 && counted[0] < n {
				return
			}
			if round == rounds {
				t.Fatalf("the slow member counted %v members in each of %d rounds: the scenario did not happen", counted, rounds)
			}
			t.Logf("round %d: the slow member counted %v members; again", round, counted)
		}
	})
}

// slowMemberRound plays TestSlowMemberNotStranded's scenario once on a
// fresh path, checks that every member entered and left and that nothing
// is left behind, and returns what the slow member counted while waiting
// (nothing if it never waited).
func slowMemberRound(t *testing.T, b zktest.Backend, n int) []int64 {
	ctx := recipetest.Context(t)
	admin := b.Connect(t)
	path := barrierPath(t, admin)
	fast := newMembers(t, b, path, n, n-1)

	proxy := zktest.NewProxy(t, b.Addr())
	slowClient := b.Connect(t, client.WithDialer(proxy.Dialer()))
	var log logtest.Recorder
	slow := barrier.NewDouble(slowClient, path, n, barrier.WithLogger(slog.New(&log)))

	errs := make(chan error, n)
	enterAndLeave := func(d *barrier.Double) {
		err := d.Enter(ctx)
		if err == nil {
			err = d.Leave(ctx)
		}
		errs <- err
	}
	for i := range n - 2 {
		go enterAndLeave(fast[i].d)
	}
	waitMembers(t, admin, path, n-2)
	// Every request of the slow member now takes a while each way: its
	// node is created well before its listing reaches the server.
	proxy.SetLatency(zktest.Scale(300 * time.Millisecond))
	slowDone := make(chan struct{})
	go func() {
		enterAndLeave(slow)
		close(slowDone)
	}()
	waitMembers(t, admin, path, n-1)
	go enterAndLeave(fast[n-2].d)
	counting := func() bool { return len(ints(&log, "zkit: barrier: waiting for members", "members")) > 0 }
	recipetest.Eventually(t, "the slow member counted, or went through", func() bool {
		select {
		case <-slowDone:
			return true
		default:
			return counting()
		}
	})
	proxy.SetLatency(0)
	for range n {
		if err := recv(t, errs, "every member to enter and leave"); err != nil {
			t.Fatal(err)
		}
	}
	if got := recipetest.Children(t, admin, path); len(got) != 0 {
		t.Fatalf("left behind: %v", got)
	}
	return ints(&log, "zkit: barrier: waiting for members", "members")
}

// A member whose session expires inside the barrier does not hang the
// others: they leave once its node is gone, with ErrMemberLost, and the
// lost member learns of its loss. Both the member the others wait for (the
// lowest) and another one.
func TestSessionExpiryInside(t *testing.T) {
	for _, which := range []string{"lowest", "other"} {
		t.Run(which, func(t *testing.T) {
			zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
				const n = 3
				ctx := recipetest.Context(t)
				admin := b.Connect(t)
				path := barrierPath(t, admin)
				ms := newMembers(t, b, path, n, n)
				enterAll(t, ctx, ms)
				victim := 0 // the lowest member, or the highest one for "other"
				for i, m := range ms {
					if which == "lowest" && m.d.Node() < ms[victim].d.Node() || which == "other" && m.d.Node() > ms[victim].d.Node() {
						victim = i
					}
				}
				sess := ms[victim].c.Session()
				errs := make(chan error, n)
				leave := func(i int) { errs <- ms[i].d.Leave(ctx) }
				if which == "lowest" {
					// The others are already waiting for it in Leave.
					for i := range ms {
						if i != victim {
							go leave(i)
						}
					}
					waitMembers(t, admin, path, 1)
					b.ExpireSession(t, sess)
				} else {
					// It expires before the others call Leave.
					b.ExpireSession(t, sess)
					waitMembers(t, admin, path, n-1)
					for i := range ms {
						if i != victim {
							go leave(i)
						}
					}
				}
				for range n - 1 {
					if err := recv(t, errs, "the survivors' Leave"); !errors.Is(err, barrier.ErrMemberLost) {
						t.Fatalf("survivor's Leave returned %v, want ErrMemberLost", err)
					}
				}
				recipetest.Within(t, sess.Done(), "the victim's session loss")
				if err := ms[victim].d.Leave(ctx); !errors.Is(err, client.ErrSessionLost) || !errors.Is(err, recipes.ErrLost) {
					t.Fatalf("victim's Leave returned %v, want session lost", err)
				}
				if got := members(t, admin, path); len(got) != 0 {
					t.Fatalf("members left behind: %v", got)
				}
				// The path serves the next round; the victim joins it under
				// its client's new session.
				recipetest.Eventually(t, "the victim's client has a new session", func() bool { return ms[victim].c.Session().Alive() })
				ms[victim].d = barrier.NewDouble(ms[victim].c, path, n)
				enterAll(t, ctx, ms)
				leaveAll(t, ctx, ms)
			})
		})
	}
}

// A member whose session expires before the threshold is not counted: the
// others wait for count live members. Its own Enter, which was not through,
// has lost only its place: it goes on under the next session with a new
// node (its old one gone), and enters with the others once count live
// members are there.
func TestSessionExpiryBeforeThreshold(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const n = 3
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		ms := newMembers(t, b, path, n, n)
		entered := make(chan int, n)
		errs := make(chan error, n)
		enter := func(i int) {
			if err := ms[i].d.Enter(ctx); err != nil {
				errs <- err
				return
			}
			entered <- i
		}
		go enter(0)
		go enter(1)
		waitMembers(t, admin, path, 2)
		before := members(t, admin, path)
		old := ms[1].c.Session()
		b.ExpireSession(t, old)
		recipetest.Eventually(t, "the expired member entering again under its next session", func() bool {
			select {
			case err := <-errs:
				t.Fatalf("an Enter whose session expired before the threshold returned %v, want it to go on", err)
			default:
			}
			now := members(t, admin, path)
			sess := ms[1].c.Session()
			return len(now) == 2 && !slices.Equal(now, before) && sess != nil && sess.ID() != old.ID()
		})
		quiet(t, entered, "a member entered with 2 of 3 live members")
		go enter(2)
		got := []int{recv(t, entered, "member"), recv(t, entered, "member"), recv(t, entered, "member")}
		slices.Sort(got)
		if !slices.Equal(got, []int{0, 1, 2}) {
			t.Fatalf("entered: %v, want 0, 1 and 2", got)
		}
		leaveAll(t, ctx, ms)
	})
}

// On timeout or cancel, the member's node is deleted; a member that gives
// up inside Leave while the others wait for it is a lost member to them.
func TestCancel(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		ms := newMembers(t, b, path, 2, 2)

		tctx, cancel := context.WithTimeout(ctx, zktest.Scale(200*time.Millisecond))
		defer cancel()
		if err := ms[0].d.Enter(tctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Enter returned %v, want context.DeadlineExceeded", err)
		}
		waitMembers(t, admin, path, 0)
		cctx, cancelEnter := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- ms[0].d.Enter(cctx) }()
		waitMembers(t, admin, path, 1)
		cancelEnter()
		if err := recv(t, done, "the cancelled Enter"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Enter returned %v, want context.Canceled", err)
		}
		waitMembers(t, admin, path, 0)
		if err := ms[0].d.Leave(ctx); !errors.Is(err, barrier.ErrNotEntered) {
			t.Fatalf("Leave after a failed Enter returned %v, want ErrNotEntered", err)
		}

		// Inside: the lowest member gives up waiting for the other.
		enterAll(t, ctx, ms)
		if err := ms[0].d.Enter(ctx); !errors.Is(err, barrier.ErrEntered) {
			t.Fatalf("second Enter returned %v, want ErrEntered", err)
		}
		low, other := ms[0], ms[1]
		if other.d.Node() < low.d.Node() {
			low, other = other, low
		}
		lctx, cancelLeave := context.WithCancel(ctx)
		go func() { done <- low.d.Leave(lctx) }()
		quiet(t, done, "the lowest member left while the other was inside")
		cancelLeave()
		if err := recv(t, done, "the cancelled Leave"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Leave returned %v, want context.Canceled", err)
		}
		waitMembers(t, admin, path, 1)
		if err := other.d.Leave(ctx); !errors.Is(err, barrier.ErrMemberLost) {
			t.Fatalf("the other's Leave returned %v, want ErrMemberLost", err)
		}
	})
}

// A create whose reply is lost is not made twice.
func TestLostCreateReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		if err := admin.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		c := b.Connect(t, b.CutNextCreate(t, path)...)
		cut := barrier.NewDouble(c, path, 2)
		other := barrier.NewDouble(b.Connect(t), path, 2)
		done := make(chan error, 1)
		go func() { done <- cut.Enter(ctx) }()
		if err := other.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, done, "Enter after a lost create reply"); err != nil {
			t.Fatal(err)
		}
		if got := members(t, admin, path); len(got) != 2 {
			t.Fatalf("members after a lost create reply: %v", got)
		}
		go func() { done <- cut.Leave(ctx) }()
		if err := other.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, done, "Leave"); err != nil {
			t.Fatal(err)
		}
	})
}

// Bad input is refused before anything is sent.
func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		for _, count := range []int{0, -1} {
			if err := barrier.NewDouble(c, base+"/b", count).Enter(ctx); !isInputError(err) {
				t.Errorf("Enter with count %d = %v, want an *client.InputError", count, err)
			}
		}
		for _, p := range []string{"", "relative", "/", base + "//x", base + "/x/", base + "/./x", base + "/bad\x00name"} {
			if err := barrier.NewDouble(c, p, 2).Enter(ctx); !isInputError(err) {
				t.Errorf("Enter(%q) = %v, want an *client.InputError", p, err)
			}
			sb := barrier.New(c, p)
			for name, f := range map[string]func(context.Context) error{"Set": sb.Set, "Remove": sb.Remove, "Wait": sb.Wait} {
				if err := f(ctx); !isInputError(err) {
					t.Errorf("%s(%q) = %v, want an *client.InputError", name, p, err)
				}
			}
		}
		if ok, _, err := c.Exists(ctx, base); err != nil || ok {
			t.Fatalf("something was created under %s (exists=%v, err=%v)", base, ok, err)
		}
		if !c.Session().Alive() {
			t.Fatal("bad input cost the session")
		}
	})
}

// A member that arrives while a round is past its threshold does not pass
// with it: it waits for that round to end and joins the next one.
func TestLateMemberJoinsNextRound(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		ms := newMembers(t, b, path, 2, 4)
		enterAll(t, ctx, ms[:2])
		late := make(chan error, 1)
		go func() { late <- ms[2].d.Enter(ctx) }()
		quiet(t, late, "a late member passed with a round that opened without it")
		if got := members(t, admin, path); len(got) != 2 {
			t.Fatalf("the late member joined the open round: %v", got)
		}
		leaveAll(t, ctx, ms[:2])
		waitMembers(t, admin, path, 1) // the late member, in the next round
		quiet(t, late, "the late member passed alone")
		if err := ms[3].d.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, late, "the late member's Enter"); err != nil {
			t.Fatal(err)
		}
		leaveAll(t, ctx, ms[2:])
	})
}

// A ready node left by a round whose members are all gone does not block
// the path: the next member to arrive removes it.
func TestStaleReady(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		ms := newMembers(t, b, path, 2, 2)
		enterAll(t, ctx, ms)
		for _, m := range ms {
			m.c.Close() // both vanish inside: nobody deletes ready
		}
		waitMembers(t, admin, path, 0)
		if got := recipetest.Children(t, admin, path); !slices.Equal(got, []string{"ready"}) {
			t.Fatalf("after both members vanished: %v, want the ready node alone", got)
		}
		enterAll(t, ctx, newMembers(t, b, path, 2, 2))
	})
}

// A member waiting for a past round to end goes on when that round's
// members all vanish inside (nobody left to delete ready): it sees the
// round empty, removes the stale ready node and joins the next round.
func TestRoundVanishesWhileNextWaits(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		ms := newMembers(t, b, path, 2, 4)
		enterAll(t, ctx, ms[:2])
		next := make(chan error, 1)
		go func() { next <- ms[2].d.Enter(ctx) }()
		quiet(t, next, "a member passed with a round that opened without it")
		for _, m := range ms[:2] {
			m.c.Close() // the round vanishes inside
		}
		waitMembers(t, admin, path, 1) // the waiter, in the next round
		if ready, _, err := admin.Exists(ctx, path+"/ready"); err != nil || ready {
			t.Fatalf("the stale ready node is still there (%v)", err)
		}
		if err := ms[3].d.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, next, "the waiting member's Enter"); err != nil {
			t.Fatal(err)
		}
		leaveAll(t, ctx, ms[2:])
	})
}

// A member whose connection is cut while it waits for the threshold, for
// less than its session timeout, still goes through once it is back: the
// watch is set again on reconnect.
func TestConnectionLoss(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		cutClient := b.Connect(t, opts...)
		ms := append(newMembers(t, b, path, 3, 2), member{c: cutClient, d: barrier.NewDouble(cutClient, path, 3)})
		errs := make(chan error, 3)
		go func() { errs <- ms[2].d.Enter(ctx) }()
		waitMembers(t, admin, path, 1)
		cut()
		go func() { errs <- ms[0].d.Enter(ctx) }()
		go func() { errs <- ms[1].d.Enter(ctx) }()
		for range 2 {
			if err := recv(t, errs, "the connected members' Enter"); err != nil {
				t.Fatal(err)
			}
		}
		quiet(t, errs, "the cut member's Enter returned while cut")
		heal()
		if err := recv(t, errs, "the cut member's Enter"); err != nil {
			t.Fatal(err)
		}
		leaveAll(t, ctx, ms)
	})
}

func enterAll(t *testing.T, ctx context.Context, ms []member) {
	t.Helper()
	errs := make(chan error, len(ms))
	for _, m := range ms {
		go func() { errs <- m.d.Enter(ctx) }()
	}
	for range ms {
		if err := recv(t, errs, "Enter"); err != nil {
			t.Fatal(err)
		}
	}
}

func leaveAll(t *testing.T, ctx context.Context, ms []member) {
	t.Helper()
	errs := make(chan error, len(ms))
	for _, m := range ms {
		go func() { errs <- m.d.Leave(ctx) }()
	}
	for range ms {
		if err := recv(t, errs, "Leave"); err != nil {
			t.Fatal(err)
		}
	}
}

// Enter called the moment the client has lost its session, while it opens
// the next one, waits for that session instead of failing with "session
// lost" (it held nothing yet); so do Set and Wait of the simple barrier.
func TestEnterAfterSessionLoss(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := barrierPath(t, c)
		old := c.Session()
		b.ExpireSession(t, old)
		recipetest.Within(t, old.Done(), "the session loss")
		d := barrier.NewDouble(c, path, 1)
		if err := d.Enter(ctx); err != nil {
			t.Fatalf("Enter right after a session loss: %v, want it to wait for the next session", err)
		}
		if err := d.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// The barrier's directory, and the simple barrier's parent, created with a
// lost reply: Enter and Set get through (creating a directory twice only
// answers "node exists").
func TestLostReplyOnDirectory(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := barrierPath(t, admin)
		c, cut := recipetest.LostCreateOf(t, b, path)
		d := barrier.NewDouble(c, path, 1)
		if err := d.Enter(ctx); err != nil {
			t.Fatalf("Enter through a lost reply on the directory's create: %v", err)
		}
		if !cut() {
			t.Fatal("the directory's create never lost its reply")
		}
		if err := d.Leave(ctx); err != nil {
			t.Fatal(err)
		}

		parent := zktest.UniquePath(t) + "/gates"
		c2, cut2 := recipetest.LostCreateOf(t, b, parent)
		if err := barrier.New(c2, parent+"/g").Set(ctx); err != nil {
			t.Fatalf("Set through a lost reply on the parent's create: %v", err)
		}
		if !cut2() {
			t.Fatal("the parent's create never lost its reply")
		}
		if ok, _, err := admin.Exists(ctx, parent+"/g"); err != nil || !ok {
			t.Fatalf("the barrier node exists: %v, %v", ok, err)
		}
	})
}
