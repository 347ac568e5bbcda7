package election

import (
	"context"
	"sync"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Term is one participant's leadership, from the moment Campaign returns it
// until Done is closed. It does not depend on the context given to
// Campaign: that one bounds the wait to lead, this one's Context bounds
// the leader's work.
//
// Done is closed, and Context ends, when the participant may no longer
// lead: it resigned (cause ErrReleased), its session was lost, its
// connection stayed suspended beyond the tolerance (zkit then deletes its
// node as soon as it can, so that the next candidate may lead), or its
// node was deleted. Every cause but resigning matches ErrLost.
//
// A term that has ended may already have a successor. Writes that must
// come from the leader only go through Multi (ZooKeeper refuses them once
// the term's node is gone); writes elsewhere carry Token, which grows from
// term to term, and are refused there when a higher token has been seen.
type Term struct {
	lease *recipes.Lease
	e     *Election  // whose Campaign returned it
	mu    sync.Mutex // guards id
	id    string     // the id published: the Election's, or the last proclaimed

	proclaiming sync.Mutex // one Proclaim at a time: id is the last written
}

// ID is the leader's participant id: the Election's, or the one it
// proclaimed last (Proclaim).
func (t *Term) ID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.id
}

// Node is the full path of the leader's node.
func (t *Term) Node() string { return t.lease.Node() }

// Token is the term's fencing token: recipes.TokenOf the czxid of its node
// (the czxid times recipes.MaxHolders), the same number Leader.Token gives
// for this term. The tokens of successive terms of one election strictly
// increase, across sessions and restarts of the ensemble.
func (t *Term) Token() int64 { return t.lease.Token() }

// Session is the session that owns the term's node.
func (t *Term) Session() *client.Session { return t.lease.Session() }

// Done is closed when the term ends; Context tells why.
func (t *Term) Done() <-chan struct{} { return t.lease.Done() }

// Context ends when the term ends; run the leader's work under it.
// context.Cause gives the reason: ErrReleased after Resign, otherwise
// an error matching ErrLost.
func (t *Term) Context() context.Context { return t.lease.Context() }

// Err is nil while the term lasts, then the reason it ended.
func (t *Term) Err() error { return t.lease.Err() }

// Guard returns an op that makes a client.Multi fail unless the term's
// node still exists.
func (t *Term) Guard() client.Op { return t.lease.Guard() }

// Multi applies ops atomically, and only while the term lasts: it prepends
// Guard and returns the results of ops. Once the term has ended, or when
// the guard fails on the server, nothing is applied and the error matches
// ErrReleased after Resign or Requeue, ErrLost otherwise.
func (t *Term) Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	return t.lease.Multi(ctx, ops...)
}

// Proclaim publishes id as the leader's participant id in place of the one
// it campaigned with, without resigning, as etcd's Proclaim does: it
// writes the term's node, whose data Leader, Observe and Participants
// report (and Curator's LeaderLatch, in getLeader and getParticipants).
// ID returns it from then on; the Election's next candidacies (Campaign,
// Requeue, Run's next terms) campaign with the Election's own id again.
//
// Proclaim is fenced: it writes only while the term lasts, with a write
// conditional on the version of the node that the term last wrote, which
// ZooKeeper refuses once the node is gone (with its session, or deleted)
// or has been written by someone else. On a term that has ended, or whose
// end the write finds, nothing is published and Proclaim returns an error
// matching the term's Err: ErrLost (its session lost, matching
// client.ErrSessionLost or client.ErrClosed too; ErrNodeDeleted), or
// ErrReleased after Resign. If the write's reply is lost, Proclaim reads
// the node back; if ctx ends first, its error matches
// client.ErrOutcomeUnknown: the id was published or not, and the term goes
// on either way (the next Proclaim settles which). An id that Campaign
// would refuse is an *client.InputError, before anything is sent.
//
// Each write wakes the candidate right behind the leader, which watches
// the leader's node: a zkit candidate lists the election once more and
// waits on. Curator's LeaderLatch, though, reacts only to the deletion of
// the node it watches and stops watching at any other event: a LeaderLatch
// right behind a leader that proclaims would not see that leader resign,
// and would wait until its own connection is lost (its reconnect makes it
// look again). Do not Proclaim in an election in which Curator's
// LeaderLatch candidates take part.
func (t *Term) Proclaim(ctx context.Context, id string) error {
	if reason := checkID(id); reason != "" {
		return &client.InputError{Op: "proclaim", Path: t.Node(), Reason: reason}
	}
	if err := recipes.CheckData(t.e.c, "proclaim", t.Node(), []byte(id)); err != nil {
		return err
	}
	t.proclaiming.Lock()
	defer t.proclaiming.Unlock()
	if err := t.lease.Update(ctx, []byte(id)); err != nil {
		return recipes.Wrap("proclaim", t.Node(), err)
	}
	t.mu.Lock()
	t.id = id
	t.mu.Unlock()
	return nil
}

// Resign ends the term: Done is closed at once, then the node is deleted,
// with a plain delete so that every kind of candidate behind it (Curator's
// LeaderLatch included) takes over. It waits for the delete while ctx
// allows; if ctx ends first, the delete goes on in the background for as
// long as the client lives, and Resign returns ctx's error.
//
// Resign returns nil when the term lasted until Resign was called. If it
// had already been lost, Resign still cleans up and returns the reason
// (matching ErrLost): another participant may have led meanwhile.
// Calling Resign again returns the same result.
func (t *Term) Resign(ctx context.Context) error { return t.lease.Unlock(ctx) }

// Requeue resigns and campaigns again at the back of the election in one
// step, as Curator's LeaderSelector with autoRequeue does in two: the
// term's node is deleted in the same transaction as the new candidacy's
// node is created. That is one request less than Resign then Campaign,
// and leaves no moment in which the participant has no node; the next
// candidate takes over as after Resign. Requeue then waits, as Campaign
// does, until the participant leads again and returns that term, with
// Campaign's errors.
//
// The term ends as after Resign (Done is closed at once, Err is
// ErrReleased). A term already lost is cleaned up as Resign would and
// Requeue campaigns anew; its Err tells how it ended.
func (t *Term) Requeue(ctx context.Context) (*Term, error) {
	next, err := t.e.campaign(ctx, "requeue", t)
	return next, recipes.Wrap("requeue", t.e.Path(), err)
}
