package election

import (
	"cmp"
	"context"
	"slices"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Participant is one candidacy in an election, as Participants lists it.
type Participant struct {
	ID   string // the participant's id (its node's data)
	Node string // the full path of its node
	// Leader is true for the first in line, the owner of the lowest node:
	// the leader, as Leader reports it (which says what that means).
	Leader bool
}

// Participants lists the election's candidacies in line order, the
// leader first, each with its id, as Curator's LeaderLatch getParticipants
// does: zkit's candidates and Curator's LeaderLatch ones alike, since they
// share one layout; children of other shapes are left out. A participant
// that campaigns twice at once is listed twice, once per node.
//
// The list is read with one listing and then one read per candidate (many
// in flight at once), not at one instant: a candidate that joins or leaves
// meanwhile may or may not be in it, and the first listed is the leader
// once the candidates before it have left.
//
// An election whose path does not exist has no participants (nil, nil).
// Its errors are the client's (a lost connection or session fails the
// call: nothing is retried), and an *client.InputError for an invalid
// path, before anything is sent.
func (e *Election) Participants(ctx context.Context) ([]Participant, error) {
	dir := e.Path()
	if err := recipes.CheckDir("participants", dir, "election"); err != nil {
		return nil, err
	}
	type candidacy struct {
		node recipes.Node
		id   string
	}
	found, err := recipes.ReadChildren(ctx, e.c, dir, func(name string, data []byte, _ *client.Stat) *candidacy {
		if n, ok := recipes.ParseNode(name, kind); ok {
			return &candidacy{node: n, id: string(data)}
		}
		return nil
	})
	if err != nil {
		return nil, recipes.Wrap("participants", dir, err)
	}
	// Read in name order: line order is creation order (as SortNodes
	// sorts), names breaking ties.
	slices.SortStableFunc(found, func(a, b candidacy) int { return cmp.Compare(a.node.Created(), b.node.Created()) })
	var ps []Participant
	for i, f := range found {
		ps = append(ps, Participant{ID: f.id, Node: client.JoinPath(dir, f.node.Name), Leader: i == 0})
	}
	return ps, nil
}
