package counter

import (
	"context"
	"errors"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Turns keep the tail of a contended counter short. Without them the
// writer that has just won writes again from the version its write
// returned, one round trip after its last write, while a loser needs a read
// first: the winner wins again and again, and a loser waits for a lucky
// moment (at 8 sessions on one node, a p99 twice the naive read-and-write
// loop's). So a batch whose write lost takes a turn, a protected ephemeral
// sequential child "_c_<id>-turn-<seq>" of the counter's node, and waits
// in line for it, as a lock's contenders do; but it does not hold up the
// writer in front of it for long:
//
//   - Every reply about the node carries its number of children, so every
//     zkit writer learns for free that turns are waiting. A writer that
//     has read the node (it is not the one that wrote last) and sees
//     children joins the line before it writes at all.
//   - Turns are served at gaps: versions that are a multiple of streak.
//     A writer that has just written a gap version while turns wait does
//     not write again at once: it watches the node for up to yieldWait,
//     and if the first turn in line writes meanwhile, it takes a turn
//     itself, at the end of the line. Between gaps it writes on without
//     waiting, one round trip per write, as a lone writer does.
//   - The first turn in line reads the node with a watch until it is at a
//     gap, then writes, deleting its turn in the same multi. It writes
//     anyway when no version came for headIdle (the writer ahead stopped)
//     or it has been first for headPatience (the writer ahead does not
//     take part: Curator, kazoo, or an older zkit).
//   - A turn waits for the one before it for at most turnPatience, so a
//     turn whose owner hangs without losing its session slows the line
//     down but does not stop it.
//
// So writers take turns of streak writes each, in the order they lost,
// and a handover costs about one round trip (the next writer in line
// must read the value: a watch event carries no data): at 8 sessions the
// p99 is about the naive loop's while the throughput stays above it (see
// the README). A lone writer never sees a child and never waits. None of
// this is needed for correctness: every write is still conditional on the
// version it was computed from, whoever (zkit, Curator, kazoo) writes in
// between.
//
// Why the first turn re-reads the node after each version instead of
// counting versions from a persistent watch (addWatch, ZooKeeper 3.6+):
// such a watch sends an event for every write to every session that holds
// it, so it takes more from the server than the reads it saves (tried: 2.5
// requests per increment instead of 2.85, but less than half the
// throughput at 32 sessions). On ZooKeeper 3.8 it also ends as soon as the
// same connection sets a one-shot watch on the node, and can be removed
// only together with the connection's one-shot watches there.
//
// A turn belongs to one batch: its winning write deletes it, and a batch
// that ends otherwise deletes it in the background (the server deletes it
// with the session anyway). Its protected name lets a create whose reply
// was lost find the node instead of leaving a second one. While a turn
// exists the node cannot be deleted (the server refuses to delete a node
// with children).
const (
	streak       = 4
	yieldWait    = 3 * time.Millisecond
	headIdle     = 3 * time.Millisecond
	headPatience = 30 * time.Millisecond
	turnPatience = 100 * time.Millisecond
)

// errTurnGone reports a turn node deleted under its batch: the session
// that owned it was lost, or someone deleted it. The batch goes on
// without a turn.
var errTurnGone = errors.New("zkit: counter turn node gone")

// turn is a batch's place in line.
type turn struct {
	path  string
	name  string
	sess  *client.Session
	ahead string    // the turn just before this one, "" when first
	first time.Time // when it became first in line
}

// gap reports whether version is one at which the first turn in line
// writes.
func gap(version int32) bool { return version%streak == 0 }

// takeTurn joins the line. It returns nil (and the batch goes on without
// a turn) when the turn cannot be taken: the node is gone, the client may
// not create children in it, or the create failed.
func (e *engine) takeTurn(ctx context.Context) *turn {
	sess := e.c.Session()
	created, _, listing, err := e.c.CreateProtectedListed(ctx, client.JoinPath(e.path, recipes.CounterTurnKind.Marker), nil, client.EphemeralSequential)
	if err != nil {
		return nil
	}
	e.turns.Add(1)
	_, name := client.SplitPath(created)
	t := &turn{path: created, name: name, sess: sess}
	if listing == nil || t.place(listing.Children) != nil {
		t.ahead = name // unknown: awaitTurn lists
	}
	return t
}

// place finds the turn's place in children.
func (t *turn) place(children []string) error {
	t.ahead = ""
	for _, n := range recipes.SortNodes(children, recipes.CounterTurnKind) {
		if n.Name == t.name {
			return nil
		}
		t.ahead = n.Name
	}
	return errTurnGone
}

// drop deletes the turn in the background, so that the batch's callers
// get their results at once (a turn left a moment longer only makes the
// turns behind it wait that long).
func (e *engine) drop(t *turn) {
	if t == nil || t.sess == nil {
		return
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_ = recipes.Remove(ended, e.c, t.sess, t.path, recipes.Removal{})
}

// awaitTurn waits until t is first in line and the node is at a gap (or
// the writer ahead went quiet or does not take turns), and leaves what it
// read of the node in the view.
func (e *engine) awaitTurn(ctx context.Context, t *turn, pause *client.Backoff) error {
	for t.ahead != "" {
		if t.ahead != t.name {
			ok, _, ch, err := e.c.ExistsW(ctx, client.JoinPath(e.path, t.ahead))
			if again, err := trouble(ctx, pause, err); err != nil || again {
				if err != nil {
					return err
				}
				continue
			}
			if ok && !wait(ctx, ch, turnPatience) {
				if err := ctx.Err(); err != nil {
					return err
				}
				t.ahead = "" // the turn ahead is stuck: go first
				break
			}
		}
		children, _, err := e.c.Children(ctx, e.path)
		if again, err := trouble(ctx, pause, err); err != nil || again {
			if err != nil {
				return err
			}
			continue
		}
		if err := t.place(children); err != nil {
			return err
		}
	}
	if t.first.IsZero() {
		t.first = time.Now()
	}
	for {
		data, st, ch, err := e.c.GetW(ctx, e.path)
		if again, err := trouble(ctx, pause, err); err != nil || again {
			if err != nil {
				return err
			}
			continue
		}
		e.pace.observe(e.view, st)
		e.setView(data, st, false)
		if gap(st.Version) || time.Since(t.first) > headPatience || !wait(ctx, ch, headIdle) {
			return ctx.Err()
		}
	}
}

// trouble sorts the error of a request made while waiting for a turn:
// again after a pause for connection trouble, errTurnGone for a missing
// node (a turn is a child of the node: it is gone with it), err otherwise.
func trouble(ctx context.Context, pause *client.Backoff, err error) (again bool, _ error) {
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, client.ErrNoNode):
		return false, errTurnGone
	case client.IsRetryable(err):
		return true, pause.Wait(ctx)
	}
	return false, err
}

// yield is called at a gap (see gap): it waits up to yieldWait for the
// first turn in line to write, and reports whether someone wrote.
func (e *engine) yield(ctx context.Context) bool {
	v := e.view
	ok, st, ch, err := e.c.ExistsW(ctx, e.path)
	if err != nil {
		return false // the write will tell
	}
	if !ok || st.Version != v.version || st.Czxid != v.czxid {
		return true
	}
	return wait(ctx, ch, yieldWait)
}

// wait waits up to d for ch, and reports whether it fired.
func wait(ctx context.Context, ch <-chan client.WatchEvent, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
