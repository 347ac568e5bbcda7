package election

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Leader is who leads an election at one moment: the participant whose
// node is the lowest. The zero value, NoLeader, means that no candidate is
// in the election; it is a value like any other, delivered by Observe when
// the last candidate leaves.
//
// The owner of the lowest node may not know yet that it leads (its
// Campaign is still confirming), or may already have lost its term (its
// connection is suspended and its node not deleted yet): Leader describes
// the election's nodes, not the candidates' own accounting. Only a Term
// entitles a participant to act as the leader.
type Leader struct {
	ID    string // the leader's participant id (its node's data)
	Node  string // the full path of the leader's node
	Token int64  // the fencing token of its term: recipes.TokenOf(the node's czxid)
}

// NoLeader is the Leader of an election without candidates.
var NoLeader = Leader{}

// String is "ID (node)", or "no leader".
func (l Leader) String() string {
	if l == NoLeader {
		return "no leader"
	}
	return fmt.Sprintf("%s (%s)", l.ID, l.Node)
}

// Leader returns the current leader, or NoLeader when there is none (or
// the election's path does not exist). Its errors are the client's, and
// an *client.InputError for an invalid path.
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	l, _, err := e.readLeader(ctx, false)
	return l, recipes.Wrap("leader", e.Path(), err)
}

// Observe follows the election's leader until ctx ends. The feed's Values
// deliver the leader whenever it changes, NoLeader included, starting with
// the current one; a receiver that falls behind skips to the latest value.
//
// Observation is level-triggered: the state is read again after every
// change, reconnect and new session, so that the last value delivered is
// always the current leader, even when leaders came and went while the
// connection was down. Values is closed when ctx ends or on an error that
// retrying cannot cure (an invalid path: an *client.InputError); the
// feed's Err tells which.
//
// It watches one node at a time: the leader's, or, while there is none,
// the election's directory.
func (e *Election) Observe(ctx context.Context) *recipes.Feed[Leader] {
	read := func(ctx context.Context) (Leader, <-chan client.WatchEvent, error) {
		return e.readLeader(ctx, true)
	}
	return recipes.Follow(ctx, e.c, read, func(a, b Leader) bool { return a == b })
}

// readLeader reads the leader, and with watch set returns a watch that
// fires when the leader may have changed: on the leader's node (no lower
// node can appear after it), on the directory's children while it has no
// candidate, on the directory's existence while it is missing.
func (e *Election) readLeader(ctx context.Context, watch bool) (Leader, <-chan client.WatchEvent, error) {
	dir := e.Path()
	if err := recipes.CheckDir("leader", dir, "election"); err != nil {
		return NoLeader, nil, err
	}
	for {
		children, _, err := e.c.Children(ctx, dir)
		switch {
		case errors.Is(err, client.ErrNoNode):
			if !watch {
				return NoLeader, nil, nil
			}
			ok, _, w, err := e.c.ExistsW(ctx, dir)
			if err != nil || !ok {
				return NoLeader, w, err
			}
			continue // created meanwhile
		case err != nil:
			return NoLeader, nil, err
		}
		nodes := recipes.SortNodes(children, kind)
		if len(nodes) == 0 {
			if !watch {
				return NoLeader, nil, nil
			}
			children, _, w, err := e.c.ChildrenW(ctx, dir)
			if errors.Is(err, client.ErrNoNode) {
				continue
			}
			if err != nil || len(recipes.SortNodes(children, kind)) == 0 {
				return NoLeader, w, err
			}
			continue // a candidate joined meanwhile
		}
		path := client.JoinPath(dir, nodes[0].Name)
		var (
			data []byte
			st   *client.Stat
			w    <-chan client.WatchEvent
		)
		if watch {
			data, st, w, err = e.c.GetW(ctx, path)
		} else {
			data, st, err = e.c.Get(ctx, path)
		}
		switch {
		case errors.Is(err, client.ErrNoNode):
			continue // the leader left meanwhile
		case err != nil:
			return NoLeader, nil, err
		}
		return Leader{ID: string(data), Node: path, Token: recipes.TokenOf(st.Czxid)}, w, nil
	}
}
