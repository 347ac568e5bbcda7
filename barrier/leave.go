package barrier

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
	"github.com/zkit-dev/zkit/recipes"
)

// Leave leaves the barrier and returns once every member of the round has
// left: no member node of the round is left. It never returns earlier, on
// success or on ErrMemberLost.
//
// It returns ErrMemberLost (still only once no member node is left) when a
// member vanished instead of leaving, ErrNotEntered without a successful
// Enter, ctx's error when ctx ends first, and an error matching
// ErrLost and client.ErrSessionLost when the member's session is
// lost. On every error the member's node is deleted, at once or in the
// background: the others then count it as lost.
func (d *Double) Leave(ctx context.Context) (err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.inside {
		return ErrNotEntered
	}
	d.inside = false
	ctx, span := recipekit.InstrumentsOf(d.c).Start(ctx, "barrier", "leave", d.dir)
	defer func() { endSpan(span, err) }()
	l := &leaving{d: d}
	err = l.run(ctx)
	if err != nil && !l.left {
		d.abandon(ctx)
	}
	roundDone(d.c, d.began, err)
	return err
}

// leaving is the state of one Leave: the paper's leave protocol, in which
// the lowest member (by name) leaves last and every other member waits for
// it to go.
type leaving struct {
	d        *Double
	round    map[string]bool // the members at the first listing (one of this round); later nodes are the next round's
	left     bool            // this member's node is deleted
	leftZxid int64           // the zxid of its deletion (0 if unknown)
	vanished string          // the last lowest member watched, gone without the release signal
	lost     bool            // a lowest member vanished while others were still inside

	// What the last member out needs, read while it waits for the others.
	rosterRead bool
	roster     *roster // nil if the ready node was not written by a zkit member
	hasReady   bool
}

func (l *leaving) run(ctx context.Context) error {
	d := l.d
	var (
		seen   listing // a listing taken while departing
		listed bool    // seen is to be used
		watch  = d.first
	)
	if !d.first {
		// This one counted the whole round and a lower member was in it,
		// so it is not the last out: it deletes its node at once, and
		// lists meanwhile.
		departed := make(chan error, 1)
		go func() { departed <- l.depart(ctx) }()
		ls, err := d.list(ctx, false)
		if derr := <-departed; derr != nil {
			return derr
		}
		if err != nil {
			return err
		}
		if !ls.ready && !slices.Contains(ls.members, d.name) {
			// Listed after the delete, and ready is gone: the round was
			// released, and any member node there is the next round's.
			return l.released(ctx)
		}
		seen, listed = ls, true
	}
	for {
		ls := seen
		if !listed {
			var err error
			if ls, err = d.list(ctx, watch); err != nil {
				return err
			}
		}
		listed = false
		members := ls.members
		members = l.ofRound(members)
		if l.left { // a listing sent with the delete may still show the node
			members = slices.DeleteFunc(members, func(m string) bool { return m == d.name })
		} else if !slices.Contains(members, d.name) {
			return d.gone()
		}
		if l.vanished != "" && len(members) > 0 {
			// The lowest member went while others were inside: it cannot
			// have been the last one out, so it did not leave but vanished.
			l.lost = true
		}
		switch {
		case len(members) == 0:
			return l.finish(ctx)
		case members[0] != d.name:
			if !l.left {
				if err := l.depart(ctx); err != nil {
					return err
				}
			}
			released, err := l.watchLowest(ctx, members[0])
			if err != nil || released {
				return l.result(err)
			}
			watch = false
		case len(members) == 1:
			return l.release(ctx, ls.stat)
		case ls.changed == nil:
			watch = true // the last one out waits for the others' nodes to go
		default:
			if err := l.readRoster(ctx); err != nil {
				return err
			}
			if err := d.wait(ctx, ls.changed); err != nil {
				return err
			}
		}
	}
}

// ofRound keeps the members of this round: those of the first listing.
// After the last member's release, members of the next round may already
// be joining on the same path; they are not waited for.
func (l *leaving) ofRound(members []string) []string {
	if l.round == nil {
		l.round = make(map[string]bool, len(members))
		for _, m := range members {
			l.round[m] = true
		}
		return members
	}
	return slices.DeleteFunc(members, func(m string) bool { return !l.round[m] })
}

// depart deletes this member's node and records the leave in one
// transaction: setting the directory's data increments its version, which
// counts the members that left through Leave. A reply that was lost is
// sent again: if the first one was applied, the node is gone and nothing
// is applied twice.
func (l *leaving) depart(ctx context.Context) error {
	d := l.d
	var b client.Backoff
	for {
		res, err := d.c.Multi(ctx, client.SetOp(d.dir, nil, -1), client.DeleteOp(d.node(), -1))
		switch {
		case err == nil:
			l.left, l.leftZxid = true, res[0].Stat.Mzxid
			return nil
		case errors.Is(err, client.ErrNoNode):
			if !d.sess.Alive() {
				return lost(d.c, d.dir, d.sess)
			}
			l.left = true // an earlier attempt was applied
			return nil
		case client.IsRetryable(err), client.IsOutcomeUnknown(err) && ctx.Err() == nil:
		default:
			return d.wrap(err)
		}
		if err := recipes.Pause(ctx, d.c, d.sess, &b); err != nil {
			return d.wrap(err)
		}
	}
}

// watchLowest waits for the lowest member's node to go. It reports true
// when the node went with the release signal (its data set in the
// transaction that deleted it): the last member saw everyone else leave.
func (l *leaving) watchLowest(ctx context.Context, lowest string) (released bool, err error) {
	d := l.d
	var gone <-chan client.WatchEvent
	err = d.retry(ctx, func() (err error) {
		_, _, gone, err = d.c.GetW(ctx, client.JoinPath(d.dir, lowest))
		return err
	})
	if errors.Is(err, client.ErrNoNode) {
		l.vanished = lowest
		return false, nil
	}
	if err != nil {
		return false, err
	}
	select {
	case ev := <-gone:
		switch ev.Type {
		case client.EventNodeDataChanged:
			return true, nil
		case client.EventNotWatching:
			return false, lost(d.c, d.dir, d.sess)
		}
		l.vanished = lowest
		return false, nil
	case <-d.sess.Done():
		return false, lost(d.c, d.dir, d.sess)
	case <-ctx.Done():
		return false, d.wrap(ctx.Err())
	}
}

// result is Leave's outcome once the last member released.
func (l *leaving) result(err error) error {
	if err == nil && l.lost {
		return membersLost(l.d.dir, 0)
	}
	return err
}

// finish is reached when no member of the round is left and this member
// did not see the release signal: the lowest member it watched went
// without it, or before it could watch. A zkit member that released wrote
// its outcome into the directory's data; one that vanished did not.
// Curator's members release with a plain delete, which proves nothing
// either way.
func (l *leaving) finish(ctx context.Context) error {
	d := l.d
	switch {
	case l.lost:
		return membersLost(d.dir, 0)
	case l.vanished == "":
		return l.unreleased(ctx)
	case !isZkit(l.vanished):
		return nil
	}
	var data []byte
	err := d.retry(ctx, func() (err error) {
		data, _, err = d.c.Get(ctx, d.dir)
		return err
	})
	if errors.Is(err, client.ErrNoNode) {
		return nil // the server reaped the empty directory: a release emptied it
	}
	if err != nil {
		return err
	}
	var o outcome
	if json.Unmarshal(data, &o) != nil || o.Last != l.vanished {
		return membersLost(d.dir, 1) // it vanished without releasing
	}
	if o.Lost > 0 {
		return membersLost(d.dir, o.Lost)
	}
	return nil
}

// released is Leave's outcome for a member that found its round already
// released (ready gone) just after deleting its node. The last member's
// release wrote its outcome into the directory's data after this
// member's leave; nothing can have overwritten it, since the next round
// cannot open without this member.
func (l *leaving) released(ctx context.Context) error {
	d := l.d
	var (
		data []byte
		st   *client.Stat
	)
	err := d.retry(ctx, func() (err error) {
		data, st, err = d.c.Get(ctx, d.dir)
		return err
	})
	switch {
	case errors.Is(err, client.ErrNoNode):
		return nil // the server reaped the emptied directory
	case err != nil:
		return err
	}
	var o outcome
	if st.Mzxid > l.leftZxid && json.Unmarshal(data, &o) == nil && o.Lost > 0 {
		return membersLost(d.dir, o.Lost)
	}
	return nil
}

// unreleased is finish for a member that left first and then found the
// round empty without having watched anyone. The round's lowest member
// leaves last and deletes ready as it goes; if the ready node of this
// round (older than this member's leave) is still there, that member
// vanished instead, and nobody released the round. A newer ready node
// belongs to the next round.
func (l *leaving) unreleased(ctx context.Context) error {
	d := l.d
	var (
		ok bool
		st *client.Stat
	)
	err := d.retry(ctx, func() (err error) {
		ok, st, err = d.c.Exists(ctx, d.ready)
		return err
	})
	if err != nil {
		return err
	}
	if ok && st.Czxid < l.leftZxid {
		return membersLost(d.dir, 0)
	}
	return nil
}

// release is the last member's leave: every other member of the round is
// gone. It finds, from the roster, the zkit members that vanished instead
// of leaving; then, in one transaction, it deletes its node and the ready
// node (so that the path can serve the next round) and writes its outcome
// into the directory's data. When nobody was lost it sets its node's data
// first: that is the release signal every other member is watching for.
func (l *leaving) release(ctx context.Context, st *client.Stat) error {
	d := l.d
	if err := l.readRoster(ctx); err != nil {
		return err
	}
	missing := 0
	if r := l.roster; r != nil && st != nil {
		missing = max(r.zkitOthers(d.name)-int(st.Version-r.Version), 0)
	}
	hasReady := l.hasReady
	record, _ := json.Marshal(outcome{Last: d.name, Lost: missing})
	var b client.Backoff
	for {
		var ops []client.Op
		if missing == 0 {
			ops = append(ops, client.SetOp(d.node(), nil, -1))
		}
		ops = append(ops, client.DeleteOp(d.node(), -1))
		if hasReady {
			ops = append(ops, client.DeleteOp(d.ready, -1))
		}
		ops = append(ops, client.SetOp(d.dir, record, -1))
		_, err := d.c.Multi(ctx, ops...)
		var me *client.MultiError
		switch {
		case err == nil:
			l.left = true
			if missing > 0 {
				d.cfg.Logger.Warn("zkit: barrier: members vanished instead of leaving", "path", d.dir, "lost", missing)
				return membersLost(d.dir, missing)
			}
			return nil
		case errors.As(err, &me) && errors.Is(err, client.ErrNoNode) && me.Path == d.ready:
			hasReady = false // deleted by someone else (a Curator member)
			continue
		case errors.Is(err, client.ErrNoNode):
			if !d.sess.Alive() {
				return lost(d.c, d.dir, d.sess)
			}
			l.left = true // an earlier attempt was applied
			if missing > 0 {
				return membersLost(d.dir, missing)
			}
			return nil
		case client.IsRetryable(err), client.IsOutcomeUnknown(err) && ctx.Err() == nil:
		default:
			return d.wrap(err)
		}
		if err := recipes.Pause(ctx, d.c, d.sess, &b); err != nil {
			return d.wrap(err)
		}
	}
}

// readRoster reads, once, the roster of the round (see release) and
// whether the ready node exists.
func (l *leaving) readRoster(ctx context.Context) error {
	d := l.d
	switch {
	case l.rosterRead:
		return nil
	case d.roster != nil: // this member wrote it
		l.roster, l.hasReady, l.rosterRead = d.roster, true, true
		return nil
	}
	var data []byte
	err := d.retry(ctx, func() (err error) {
		data, _, err = d.c.Get(ctx, d.ready)
		return err
	})
	switch {
	case errors.Is(err, client.ErrNoNode):
	case err != nil:
		return err
	default:
		l.hasReady = true
		if r, ok := parseRoster(data); ok {
			l.roster = &r
		}
	}
	l.rosterRead = true
	return nil
}
