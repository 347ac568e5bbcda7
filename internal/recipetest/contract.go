package recipetest

import (
	"context"
	"fmt"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Lease is what a queue recipe gives the participant whose turn has come:
// a *recipes.Lease (lock, rwlock) or a type built on one (election.Term).
type Lease interface {
	Node() string
	Token() int64
	Session() *client.Session
	Done() <-chan struct{}
	Err() error
	Guard() client.Op
	Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error)
}

// Participant is what the contract gives a recipe to make one participant.
type Participant struct {
	Client *client.Client
	Path   string
	// ID names the participant, unique within the test ("p7"), for
	// recipes whose participants have one.
	ID string
	// SuspendTolerance is how long the participant's holds survive a
	// suspended connection (the recipe's WithSuspendTolerance).
	SuspendTolerance time.Duration
}

// QueueRecipe describes a recipe built on recipes.Queue (lock, rwlock,
// election, ...) to RunQueueContract: how to make a participant R, the
// ways it acquires (its modes), and how a holder L releases.
type QueueRecipe[R any, L Lease] struct {
	New     func(Participant) R
	Modes   []Mode[R, L] // at least one Exclusive
	Release func(L, context.Context) error
}

// Mode is one way a participant acquires: exclusively (a lock, a write
// lock, a leadership) or shared with the other shared modes (a read lock).
type Mode[R any, L Lease] struct {
	// Name is the acquire call's, as the recipe names it in its errors
	// ("lock", "write lock", "campaign"); a Try's is "try " and Name.
	Name      string
	Marker    string // its nodes are "<path>/_c_<uuid>-<Marker><10-digit seq>"
	Exclusive bool
	// Acquire waits for the turn (Lock, RLock, Campaign).
	Acquire func(R, context.Context) (L, error)
	// Try takes the turn only if it need not wait, and otherwise returns
	// an error matching recipes.ErrWouldBlock (TryLock); nil if the
	// recipe has no such call.
	Try func(R, context.Context) (L, error)
}

// RunQueueContract runs the behaviour every queue recipe owes its users,
// as parallel subtests each on both servers (zktest.EachBackend):
//
//   - Exclusion: 32 contenders on 8 sessions take turns, each with a token
//     above the last holder's, and fenced writes through Multi lose no
//     update; no node is left.
//   - FIFO: waiters hold in the order they joined.
//   - AbandonedPredecessor: a waiter whose predecessor gives up waits on
//     for the holder.
//   - HolderExpiry: a holder whose session expires sees Done with a
//     session-lost cause; the next holder gets a higher token; the old
//     holder's fenced writes are refused, by the lease and by the server.
//   - AfterSessionLoss: an acquire made while the client opens its next
//     session waits for it, and holds under it.
//   - WaiterSessionLoss: an acquire whose session is lost while it waits
//     (expired, or cut off beyond its timeout) does not fail: it queues
//     again under the next session, behind those that were behind it, with
//     one node, and holds in its turn.
//   - WaiterSessionGivenUp: the same when the client gives the session up
//     while the server keeps it: the old node is deleted under the next
//     session, not left for the server's expiry (reference server only).
//   - ClosedClient: a lease ended by the client's Close has a cause
//     matching client.ErrClosed; an acquire on a closed client fails so.
//   - NodeChanged: deleting or writing a holder's node ends its lease.
//   - WaiterNodeDeleted: deleting the node of an attempt waiting behind a
//     holder ends the attempt with ErrNodeDeleted while the holder holds.
//   - Suspension: a suspended connection ends leases without tolerance at
//     once, and those with a tolerance once it has run out, and keeps the
//     others; the ended ones' nodes are deleted after healing.
//   - LostCreateReply: a create whose reply is lost leaves exactly one
//     node, which holds.
//   - CancelAndTimeout: a cancelled or timed-out acquire leaves no node.
//   - Try: a try on a free queue holds, on a held one fails with
//     recipes.ErrWouldBlock and leaves no node.
//   - BadInput: invalid paths give an *client.InputError that names the
//     call (the mode's Name), and send nothing.
//   - ForeignNodes: children of other shapes are ignored.
//   - OtherRecipe: a path holding another queue recipe's node is refused
//     with recipes.ErrOtherRecipe, leaving no node; such a node that
//     appears behind the waiters (its own participant refuses the path)
//     disturbs none of them.
//   - InNamespace: exclusion, expiry, try, bad input and other recipes'
//     nodes again, every client inside one namespace (client.WithNamespace);
//     nothing is created outside it.
//   - Directory: the directory is a container, deleted by the server once
//     empty and created again by the next participant, whose token is
//     still higher; contenders keep taking turns while the server reaps
//     every few milliseconds. It runs on servers of its own
//     (zktest.EachBackendWith), the real one a JVM started for it.
//   - DirectoryWithoutContainers: on a server without containers (the
//     reference server answering as ZooKeeper 3.4 does), the directory is
//     persistent.
//
// Every mode is tried where the test is about one participant; the
// exclusion tests use the exclusive modes.
func RunQueueContract[R any, L Lease](t *testing.T, r QueueRecipe[R, L]) {
	t.Helper()
	c := &contract[R, L]{QueueRecipe: r}
	for _, m := range r.Modes {
		if m.Exclusive {
			c.exclusive = append(c.exclusive, m)
		}
		if m.Name == "" || m.Marker == "" || m.Acquire == nil {
			t.Fatalf("recipetest: mode %+v needs a Name, a Marker and Acquire", m)
		}
	}
	if r.New == nil || r.Release == nil || len(c.exclusive) == 0 {
		t.Fatal("recipetest: a QueueRecipe needs New, Release and an exclusive mode")
	}
	each := func(fn func(*testing.T, zktest.Backend)) func(*testing.T) {
		return func(t *testing.T) { zktest.EachBackend(t, fn) }
	}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Exclusion", each(c.exclusion)},
		{"FIFO", each(c.fifo)},
		{"AbandonedPredecessor", each(c.abandonedPredecessor)},
		{"HolderExpiry", each(c.holderExpiry)},
		{"AfterSessionLoss", each(c.afterSessionLoss)},
		{"WaiterSessionLoss", each(c.waiterSessionLoss)},
		{"WaiterSessionGivenUp", c.waiterSessionGivenUp},
		{"ClosedClient", each(c.closedClient)},
		{"NodeChanged", each(c.nodeChanged)},
		{"WaiterNodeDeleted", each(c.waiterNodeDeleted)},
		{"Suspension", each(c.suspension)},
		{"LostCreateReply", each(c.lostCreateReply)},
		{"CancelAndTimeout", each(c.cancelAndTimeout)},
		{"Try", each(c.try)},
		{"BadInput", each(c.badInput)},
		{"ForeignNodes", each(c.foreignNodes)},
		{"OtherRecipe", each(c.otherRecipe)},
		{"InNamespace", each(c.inNamespace)},
		{"Directory", c.directory},
		{"DirectoryWithoutContainers", c.directoryWithoutContainers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t)
		})
	}
}

// contract is one recipe under test.
type contract[R any, L Lease] struct {
	QueueRecipe[R, L]
	exclusive []Mode[R, L]
	ids       atomic.Int64
}

// participant makes a new participant on c at path.
func (q *contract[R, L]) participant(c *client.Client, path string, tolerance time.Duration) R {
	id := fmt.Sprintf("p%d", q.ids.Add(1))
	return q.New(Participant{Client: c, Path: path, ID: id, SuspendTolerance: tolerance})
}

// acquire makes a participant and acquires in mode m, failing the test on
// error.
func (q *contract[R, L]) acquire(t *testing.T, ctx context.Context, m Mode[R, L], c *client.Client, path string, tolerance time.Duration) L {
	t.Helper()
	l, err := m.Acquire(q.participant(c, path, tolerance), ctx)
	if err != nil {
		t.Fatalf("%s on %s: %v", m.Name, path, err)
	}
	checkNode(t, path, m.Marker, l.Node())
	return l
}

// release releases l, failing the test on error.
func (q *contract[R, L]) release(t *testing.T, ctx context.Context, l L) {
	t.Helper()
	if err := q.Release(l, ctx); err != nil {
		t.Fatalf("release %s: %v", l.Node(), err)
	}
}

// checkNode checks that node is a protected sequential node of marker's
// shape in dir, as Curator names them.
func checkNode(t testing.TB, dir, marker, node string) {
	t.Helper()
	re := `^` + regexp.QuoteMeta(dir+"/") + `_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-` +
		regexp.QuoteMeta(marker) + `[0-9]{10}$`
	if !regexp.MustCompile(re).MatchString(node) {
		t.Errorf("node %q is not %s/_c_<uuid>-%s<10-digit seq>", node, dir, marker)
	}
}
