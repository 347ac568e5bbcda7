package recipetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

const (
	// failoverReapEvery is how often the ensemble deletes empty
	// containers.
	failoverReapEvery = 100 * time.Millisecond
	// killedFor is how long a killed leader stays down: long enough for
	// the others to elect a new one and serve.
	killedFor = 500 * time.Millisecond
	// isolatedFor is how long a leader stays cut off: beyond zktest's
	// syncLimit, so that it notices it lost the quorum and drops its
	// clients.
	isolatedFor = 3 * time.Second
	// failoverSessionTimeout is the failover clients' session timeout:
	// no fault here outlasts it, so that a fault costs no session.
	failoverSessionTimeout = 20 * time.Second
)

// NoAdminACL is an ACL other than the client's default one (the world may
// do all but administer): a recipe given it leaves nodes whose ACL tells
// whether they were created with the recipe's ACL.
var NoAdminACL = client.WorldACL(client.PermAll &^ client.PermAdmin)

// Ensemble is a 3-node ensemble of real ZooKeeper, started for one
// failover test, deleting empty containers every 100 ms.
type Ensemble struct {
	*zktest.ZooKeeper
}

// StartEnsemble starts the ensemble (zktest.StartEnsemble): the test is
// skipped without a ZooKeeper install, and failed with
// ZKIT_REQUIRE_ZOOKEEPER=1.
func StartEnsemble(t *testing.T) *Ensemble {
	t.Helper()
	return &Ensemble{zktest.StartEnsemble(t, 3, zktest.WithContainerCheckInterval(failoverReapEvery))}
}

// Clients connects n clients to every member of the ensemble, with a
// session timeout (20 s, scaled) that outlasts every Fault, and closes
// them when the test ends.
func (e *Ensemble) Clients(t *testing.T, n int) []*client.Client {
	t.Helper()
	b := zktest.Backend{Name: "ensemble", Servers: e.Servers()}
	cs := make([]*client.Client, n)
	for i := range cs {
		cs[i] = b.Connect(t, client.WithSessionTimeout(zktest.Scale(failoverSessionTimeout)))
	}
	return cs
}

// A Fault is what happens to the ensemble's leader, and when: it is
// killed (and restarted after 500 ms, scaled), or cut from the other
// members (Isolate; healed after 3 s, scaled). At is when, from the start
// of the participants: a negative At strikes just before they start, so
// that their first requests reach followers that have not noticed yet.
type Fault struct {
	At      time.Duration
	Isolate bool
}

// LeaderKills kills the leader just before the participants start, as
// they start, and 2 ms after (while their first creates are in flight).
var LeaderKills = []Fault{{At: -1}, {At: 0}, {At: 2 * time.Millisecond}}

// LeaderKillsBeforeAndAfter is LeaderKills without the kill at start, for
// tests that strike twice a fault (as members arrive, then as they leave):
// each restart of a killed member takes a second or two.
var LeaderKillsBeforeAndAfter = []Fault{{At: -1}, {At: 2 * time.Millisecond}}

func (f Fault) String() string {
	what := "kill"
	if f.Isolate {
		what = "isolate"
	}
	switch {
	case f.At < 0:
		return what + " before start"
	case f.At == 0:
		return what + " at start"
	}
	return fmt.Sprintf("%s %v after start", what, f.At)
}

// EachFault starts an Ensemble (StartEnsemble) and runs body on it once
// per fault, as a subtest named after the fault.
func EachFault(t *testing.T, faults []Fault, body func(t *testing.T, e *Ensemble, f Fault)) {
	t.Helper()
	e := StartEnsemble(t)
	for _, f := range faults {
		t.Run(f.String(), func(t *testing.T) { body(t, e, f) })
	}
}

// LostAtMost reports whether err, what a holder's call returned under a
// fault, is nil, and fails t unless it is nil or a loss (recipes.ErrLost):
// all that a fault which costs no session may cost a holder.
func LostAtMost(t *testing.T, what string, err error) bool {
	t.Helper()
	if err != nil && !errors.Is(err, recipes.ErrLost) {
		t.Errorf("%s: %v", what, err)
	}
	return err == nil
}

// Strike calls start, which starts the participants (and returns), and
// strikes the leader f.At from it. It returns once the fault is repaired
// and the ensemble whole again: every member serves, one leads. The
// participants may still be running then.
func (e *Ensemble) Strike(t *testing.T, f Fault, start func()) {
	t.Helper()
	leader := -1
	Eventually(t, "the ensemble has a leader", func() bool {
		l, err := e.Leader()
		leader = l
		return err == nil
	})
	strike, repair, outage := func() { e.Kill(leader) }, func() { e.Restart(leader) }, killedFor
	if f.Isolate {
		strike, outage = func() { e.Isolate(leader) }, isolatedFor
		repair = func() {
			e.Heal()
			e.settle(t)
		}
	}
	if f.At < 0 {
		strike()
		start()
	} else {
		start()
		time.Sleep(f.At)
		strike()
	}
	time.Sleep(zktest.Scale(outage))
	repair()
}

// Start starts work(ctx, i) for every i below n, each on a goroutine of
// its own, while f strikes (Strike), and returns wait, which waits until
// they have all returned and fails the test if ctx ended first. ctx ends
// after 60 s (scaled), or with the test, whose end waits for them too.
func (e *Ensemble) Start(t *testing.T, f Fault, n int, work func(ctx context.Context, i int)) (wait func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	e.Strike(t, f, func() {
		for i := range n {
			wg.Go(func() { work(ctx, i) })
		}
	})
	return func() {
		t.Helper()
		wg.Wait()
		if ctx.Err() != nil {
			t.Fatalf("%v: the participants did not finish in time", f)
		}
	}
}

// Run is Start, then wait.
func (e *Ensemble) Run(t *testing.T, f Fault, n int, work func(ctx context.Context, i int)) {
	t.Helper()
	e.Start(t, f, n, work)()
}

// settle waits until every member serves and exactly one leads.
func (e *Ensemble) settle(t *testing.T) {
	t.Helper()
	Eventually(t, "every member serves and one leads", func() bool {
		leaders := 0
		for i := range e.Servers() {
			mode, err := e.Mode(i)
			if err != nil {
				return false
			}
			if mode == "leader" {
				leaders++
			}
		}
		return leaders == 1
	})
}

// Layout is what a recipe must leave of the nodes it created once its
// participants are done, while their sessions still live.
type Layout struct {
	// Containers are directories the server deletes once empty: the
	// participants' nodes in them are all gone, and so are they.
	Containers []string
	// Empty are persistent nodes with no child left.
	Empty []string
	// Persistent are nodes that stay: parents created on the way.
	Persistent []string
	// ACL, when not nil, is the ACL of every node above (but a container
	// the server deleted already).
	ACL []client.ACL
}

// Require fails t unless, within 20 s (scaled), the nodes are as l says.
// c may be reconnecting: transient errors are waited out.
func (l Layout) Require(t *testing.T, c *client.Client) {
	t.Helper()
	ctx := Context(t)
	if l.ACL != nil {
		for _, p := range slices.Concat(l.Persistent, l.Empty, l.Containers) {
			var got []client.ACL
			err := answered(t, "getACL "+p, func() (err error) {
				got, _, err = c.GetACL(ctx, p)
				return err
			})
			switch {
			case errors.Is(err, client.ErrNoNode) && slices.Contains(l.Containers, p):
				// reaped already
			case err != nil:
				t.Fatalf("getACL %s: %v", p, err)
			case !slices.Equal(got, l.ACL):
				t.Errorf("%s has ACL %v, want %v", p, got, l.ACL)
			}
		}
	}
	for _, dir := range l.Empty {
		WaitChildren(t, c, dir, 0)
	}
	for _, dir := range l.Containers {
		waitGone(t, ctx, c, dir)
	}
	for _, p := range slices.Concat(l.Persistent, l.Empty) {
		if !exists(t, ctx, c, p) {
			t.Errorf("%s is gone: it should be persistent", p)
		}
	}
}

// UnderMissingParents returns a fresh path for the test, name under three
// nodes that do not exist yet (zktest.UniquePath, then "a" and "a/b"), and
// those nodes, outermost first: the parents a recipe creates on its way.
func UnderMissingParents(t testing.TB, name string) (path string, parents []string) {
	root := zktest.UniquePath(t)
	parents = []string{root, root + "/a", root + "/a/b"}
	return parents[2] + "/" + name, parents
}
