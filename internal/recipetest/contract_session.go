package recipetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// afterSessionLoss: in every mode, an acquire made the moment the client
// has lost its session (while it opens the next one) waits for the next
// session and holds under it, instead of failing with "session lost"
// although it held nothing yet.
func (q *contract[R, L]) afterSessionLoss(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	c := b.Connect(t)
	dir := LockDir(t, c)
	for _, m := range q.Modes {
		old := c.Session()
		lost := old.Done()
		b.ExpireSession(t, old)
		Within(t, lost, m.Name+": the expired session's Done")
		l, err := m.Acquire(q.participant(c, dir, 0), ctx)
		if err != nil {
			t.Fatalf("%s right after a session loss: %v, want it to wait for the next session", m.Name, err)
		}
		if l.Session() == old || l.Session().ID() == old.ID() {
			t.Fatalf("%s: held under the lost session 0x%x", m.Name, old.ID())
		}
		q.release(t, ctx, l)
	}
}

// closedClient: closing the client ends a lease with a cause matching
// client.ErrClosed (not "deleted by someone else", although the server
// deletes the node as the session closes), and an acquire on a closed
// client fails with client.ErrClosed.
func (q *contract[R, L]) closedClient(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	admin := b.Connect(t)
	dir := LockDir(t, admin)
	for _, m := range q.Modes {
		for range 5 {
			c := b.Connect(t)
			l := q.acquire(t, ctx, m, c, dir, time.Hour)
			c.Close()
			Within(t, l.Done(), m.Name+": Done after Close")
			if err := l.Err(); !errors.Is(err, client.ErrClosed) || !errors.Is(err, recipes.ErrLost) {
				t.Fatalf("%s: a lease ended by Close: %v, want ErrLost and ErrClosed", m.Name, err)
			}
			if _, err := m.Acquire(q.participant(c, dir, 0), ctx); !errors.Is(err, client.ErrClosed) {
				t.Fatalf("%s on a closed client: %v, want ErrClosed", m.Name, err)
			}
		}
	}
}

// otherRecipe: a path that holds another kind of queue recipe's node (a
// Curator or zkit peer of another recipe got there first: every queue
// recipe's of the registry, layout.All), or a configuration's or double
// barrier's ready node, is refused in every mode with
// recipes.ErrOtherRecipe, and the participant's node is deleted: two kinds
// on one path would be two queues that exclude nothing.
func (q *contract[R, L]) otherRecipe(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	c := b.Connect(t)
	others := []string{layout.ReadyFlag}
	for _, marker := range q.otherMarkers() {
		others = append(others, client.ProtectedName(client.NewProtectedID(), marker+"0000000001"))
	}
	for _, other := range others {
		dir := LockDir(t, c)
		if err := c.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Create(ctx, dir+"/"+other, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		for _, m := range q.Modes {
			_, err := m.Acquire(q.participant(c, dir, 0), ctx)
			if !errors.Is(err, recipes.ErrOtherRecipe) {
				t.Fatalf("%s beside a %q node: %v, want ErrOtherRecipe", m.Name, other, err)
			}
			WaitChildren(t, c, dir, 1)
		}
	}
	q.otherRecipeLater(t, ctx, b)
}

// otherRecipeLater: another kind's node that appears behind the waiters
// (its participant will refuse the path) does not disturb them: a waiter
// that lists the queue again once the waiter before it gave up ignores
// that node, and takes its turn when the holder releases. Only a node
// that came before its own makes a participant refuse the path.
func (q *contract[R, L]) otherRecipeLater(t *testing.T, ctx context.Context, b zktest.Backend) {
	m := q.exclusive[0]
	// A client each, so that a combining recipe queues them apart.
	c, middle, last := b.Connect(t), b.Connect(t), b.Connect(t)
	other := q.otherMarkers()[0]
	dir := LockDir(t, c)
	holder := q.acquire(t, ctx, m, c, dir, 0)
	giveUp, cancel := context.WithCancel(ctx)
	defer cancel()
	gaveUp := make(chan error, 1)
	go func() {
		_, err := m.Acquire(q.participant(middle, dir, 0), giveUp)
		gaveUp <- err
	}()
	WaitChildren(t, c, dir, 2)
	middleNode := ""
	for _, n := range Children(t, c, dir) {
		if dir+"/"+n != holder.Node() {
			middleNode = dir + "/" + n
		}
	}
	lastDone := make(chan error, 1)
	var lease L
	go func() {
		l, err := m.Acquire(q.participant(last, dir, 0), ctx)
		lease = l
		lastDone <- err
	}()
	WaitChildren(t, c, dir, 3)
	// Its first look (the listing that comes with its create) is done
	// once it watches the node before its own: the nodes below come after
	// that look, as the doc of this test says. (The server names the node
	// with the client's namespace.)
	WaitWatched(t, b, last.Session(), last.Namespace()+middleNode)
	foreign := dir + "/" + client.ProtectedName(client.NewProtectedID(), other+"9000000000")
	ready := client.JoinPath(dir, layout.ReadyFlag) // a configuration's or barrier's, after the waiters too
	for _, p := range []string{foreign, ready} {
		if _, err := c.Create(ctx, p, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("%s: the middle waiter: %v, want context.Canceled", m.Name, err)
	}
	// The last waiter lists the queue again within a round trip of the
	// middle one's delete; give it ample time to (wrongly) give up.
	select {
	case err := <-lastDone:
		t.Fatalf("%s: the last waiter ended while the holder held: %v (a %q node behind it)", m.Name, err, other)
	case <-time.After(zktest.Scale(300 * time.Millisecond)):
	}
	q.release(t, ctx, holder)
	if err := <-lastDone; err != nil {
		t.Fatalf("%s: the last waiter, after the holder released: %v, want its turn (the %q node came after it)", m.Name, err, other)
	}
	q.release(t, ctx, lease)
	for _, p := range []string{foreign, ready} {
		if err := c.Delete(ctx, p, -1); err != nil {
			t.Fatal(err)
		}
	}
}

func (q *contract[R, L]) hasMarker(marker string) bool {
	for _, m := range q.Modes {
		if m.Marker == marker {
			return true
		}
	}
	return false
}

// otherMarkers are the markers of every other queue recipe's nodes, as
// the registry has them (layout.All).
func (q *contract[R, L]) otherMarkers() []string {
	var out []string
	for _, r := range layout.All {
		for _, marker := range r.Queue {
			if !q.hasMarker(marker) {
				out = append(out, marker)
			}
		}
	}
	return out
}

// inNamespace: the recipe works unchanged inside a namespace: the
// contract's exclusion, holder expiry, session loss, try, bad input and
// other-recipe cases with every client in one, and nothing is created
// outside it.
func (q *contract[R, L]) inNamespace(t *testing.T, b zktest.Backend) {
	parent := zktest.UniquePath(t)
	ns := parent + "/ns"
	nb := b.With(client.WithNamespace(ns))
	for _, sub := range []struct {
		name string
		fn   func(*testing.T, zktest.Backend)
	}{
		{"Exclusion", q.exclusion}, {"HolderExpiry", q.holderExpiry}, {"AfterSessionLoss", q.afterSessionLoss},
		{"Try", q.try}, {"BadInput", q.badInput}, {"OtherRecipe", q.otherRecipe},
	} {
		t.Run(sub.name, func(t *testing.T) { sub.fn(t, nb) })
	}
	// The tests' paths are their own unique paths, inside the namespace.
	outside := b.Connect(t)
	if got := Children(t, outside, parent); len(got) != 1 || got[0] != "ns" {
		t.Fatalf("beside the namespace: %v, want only ns", got)
	}
	if got := Children(t, outside, ns); len(got) == 0 {
		t.Fatalf("nothing was created inside the namespace %s", ns)
	}
}
