package barrier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/internal/recipekit"
	"github.com/zkit-dev/zkit/recipes"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Double is one member of a double barrier: Enter returns once count
// members have entered, Leave once every member has left. See the package
// documentation for the protocol and why it cannot strand a member.
//
// A Double is one member for one round at a time: Enter, then Leave, then
// Enter again for the next round on the same path. Its methods may be
// called from any goroutine; they run one at a time.
type Double struct {
	c     *client.Client
	dir   string
	ready string
	count int
	cfg   config

	mu     sync.Mutex
	inside bool            // Enter succeeded and Leave has not been called
	sess   *client.Session // the session that owns the member node
	name   string          // the member node's name
	roster *roster         // the ready node's data, when this member created it
	first  bool            // lowest of the round it counted on entry, or not sure: Leave checks before leaving
	began  time.Time       // when the round's Enter was called
	// Member nodes of earlier rounds or attempts that may still exist:
	// their deletes went to the background, or their session was lost
	// while the server may still have it (the client gives a session up
	// after its timeout; a leader election restarts the server's timers).
	// The next Enter deletes them before it creates its node, so that
	// the others never count one beside it: this member would be counted
	// twice.
	stale []string
}

// NewDouble returns a member of the double barrier at path for count
// members. It does no I/O; Enter checks the path and the count.
func NewDouble(c *client.Client, path string, count int, opts ...Option) *Double {
	return &Double{c: c, dir: path, ready: client.JoinPath(path, readyName), count: count, cfg: newConfig(opts)}
}

// Path is the barrier's directory.
func (d *Double) Path() string { return d.dir }

// Node is the path of the member's node while it is inside the barrier,
// and "" otherwise.
func (d *Double) Node() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.inside {
		return ""
	}
	return d.node()
}

func (d *Double) node() string { return client.JoinPath(d.dir, d.name) }

// Enter joins the barrier and returns once count members have entered,
// never earlier. If a round at this path is already past its threshold, it
// first waits for that round to end.
//
// It returns an *client.InputError (nothing sent) for an invalid path or a
// count below 1, ctx's error when ctx ends first, client.ErrClosed once
// the client is closed, and an error matching ErrNodeDeleted when someone
// else deletes the member's node while it waits. A session lost before the
// threshold (expired before the client noticed, lost while Enter waited
// for an earlier round to end or for the others) costs the member nothing
// but its place: it was not inside yet, so Enter goes on under the next
// session with a new node, until ctx ends. If the others counted its old
// node meanwhile and passed, that round went on without it (their Leave
// reports it lost: ErrMemberLost), and this member waits for the next
// one. On every error the member's node is deleted: at once, or in the
// background for as long as the client lives. A node of an earlier
// attempt, Enter or Leave of this member that may still exist (its delete
// went to the background, or its session was lost while the server may
// still have it) is deleted by the next attempt before it creates its
// own, so that the others never count this member twice.
//
// A member that entered is inside until Leave, whatever happens to the
// connection meanwhile: there is nothing to suspend. If its session is
// lost, its node goes, and the others' Leave reports ErrMemberLost.
func (d *Double) Enter(ctx context.Context) (err error) {
	if err := d.validate("barrier enter"); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inside {
		return fmt.Errorf("zkit: barrier %s: %w", d.dir, ErrEntered)
	}
	ctx, span := recipekit.InstrumentsOf(d.c).Start(ctx, "barrier", "enter", d.dir)
	defer func() { endSpan(span, err) }()
	d.began = time.Now()
	for {
		// Enter on a live session: right after a session loss, wait for
		// the next one instead of failing.
		sess, err := d.c.WaitConnected(ctx)
		if err != nil {
			return d.wrap(err)
		}
		if len(d.stale) > 0 {
			if err := d.clearNodes(ctx, sess); err != nil {
				return err
			}
			if !sess.Alive() {
				continue // not known to be deleted: again under the next session
			}
		}
		d.sess, d.name, d.roster, d.first = sess, newMemberName(), nil, false
		opened, err := d.arrive(ctx)
		if err != nil {
			if d.replaced(ctx, err) {
				// Lost before this member had a node: nothing to
				// account for, so enter under the next session.
				span.AddEvent("session replaced: entering again")
				continue
			}
			return d.waitError(ctx, err)
		}
		joined, applied, err := d.join(ctx)
		if err != nil {
			if applied && !d.sess.Alive() {
				d.stale = append(d.stale, d.node())
			}
			if d.replaced(ctx, err) {
				span.AddEvent("session replaced: entering again")
				continue
			}
			return d.waitError(ctx, err)
		}
		if err := d.await(ctx, opened, joined); err != nil {
			d.abandon(ctx)
			if d.replaced(ctx, err) {
				d.requeued(span)
				continue
			}
			return d.waitError(ctx, err)
		}
		d.inside = true
		return nil
	}
}

// replaced reports whether err, an error of Enter before the threshold, is
// the loss of the member's session (not the client's Close): the session
// expired before the client noticed, was lost while Enter waited for an
// earlier round, or while it waited for the others. The member was not
// inside yet: it lost only its place, and Enter starts over under the next
// session, as it does when called just after the client noticed the loss.
// Its node, if the server may still keep it, is deleted first (stale), so
// that the others never count it twice.
func (d *Double) replaced(ctx context.Context, err error) bool {
	return !d.sess.Alive() && recipes.Requeueable(ctx, d.c, err)
}

// requeued records that Enter, having lost its session while it waited
// for the others, starts over under the next session.
func (d *Double) requeued(span trace.Span) {
	span.AddEvent("requeued", trace.WithAttributes(attribute.String("zkit.node", d.node())))
	recipekit.InstrumentsOf(d.c).Requeued("barrier")
	d.cfg.Logger.Info("zkit: barrier: session lost while entering: entering again under the next session", "path", d.dir)
}

// waitError is the error of an Enter that ended with err before the
// threshold: the member was never inside, so it is never "no longer
// held" (see recipes.WaitError).
func (d *Double) waitError(ctx context.Context, err error) error {
	return d.wrap(recipes.WaitError(ctx, d.c, err))
}

func (d *Double) validate(op string) error {
	if err := client.CheckPath(op, d.dir); err != nil {
		return err
	}
	if d.dir == "/" {
		return &client.InputError{Op: op, Path: d.dir, Reason: "a barrier needs a node of its own, not the root"}
	}
	if d.count < 1 {
		return &client.InputError{Op: op, Path: d.dir, Reason: fmt.Sprintf("member count %d: want at least 1", d.count)}
	}
	return nil
}

// arrive waits until no round at the path is past its threshold, and
// returns a watch set on the ready node while it does not exist, before
// this member's node exists: it fires when this round's ready node is
// created, however soon it is deleted again.
func (d *Double) arrive(ctx context.Context) (opened <-chan client.WatchEvent, err error) {
	for {
		var exists bool
		err := d.retry(ctx, func() (err error) {
			exists, _, opened, err = d.c.ExistsW(ctx, d.ready)
			return err
		})
		if err != nil || !exists {
			return opened, err
		}
		// A round is past its threshold here. Its last member deletes ready
		// as it leaves; if no member is left, ready outlived its round. The
		// members are watched too: if they all vanish inside, nobody will
		// delete ready, and this member clears it when it looks again.
		l, err := d.list(ctx, true)
		if err != nil {
			return nil, err
		}
		if len(l.members) == 0 && l.stat != nil {
			if len(l.others) > 0 {
				// Nodes that are no barrier's beside ready: the path is
				// another recipe's (a configuration's keys and its ready
				// flag), whose ready is not this barrier's to delete.
				return nil, l.besideReady(d.dir)
			}
			if err := d.clearStale(ctx, l.stat.Version); err != nil {
				return nil, err
			}
			continue
		}
		if err := d.waitEither(ctx, opened, l.changed); err != nil {
			return nil, err
		}
	}
}

// clearStale deletes a ready node whose round has no member left. The
// transaction requires the directory's data version seen with the empty
// listing and bumps it, so that of two members clearing at once only one
// deletes, and never the next round's ready node.
func (d *Double) clearStale(ctx context.Context, version int32) error {
	err := d.retry(ctx, func() error {
		_, err := d.c.Multi(ctx, client.SetOp(d.dir, nil, version), client.DeleteOp(d.ready, -1))
		return err
	})
	switch {
	case err == nil:
		d.cfg.Logger.Info("zkit: barrier: removed a ready node left by a round without members", "path", d.dir)
	case errors.Is(err, client.ErrBadVersion), errors.Is(err, client.ErrNoNode), client.IsOutcomeUnknown(err) && ctx.Err() == nil:
		// Someone else acted first, or the outcome will show at the next look.
	default:
		return d.wrap(err)
	}
	return nil
}

// join creates the member node, and the directory (a container, as Curator
// makes it) when it is missing: first, if this client has not seen it (see
// dirKnown; a barrier's path per phase is new to all its members,
// who reach it at once). The name is unique: a create whose reply was lost
// is sent again, and "node exists" then means it was applied. The
// directory is listed right behind the create, in the same round trip
// (client.CreateListed): the listing, when there is one, is await's first
// look.
//
// applied reports, with an error, whether a create of the member's node
// may have been applied under the member's session (its reply lost): then
// the node may still be there, counted by the others, until the server
// deletes it with the session.
func (d *Double) join(ctx context.Context) (_ *client.Listing, applied bool, _ error) {
	if !dirKnown(d.c, d.dir) {
		if err := d.makeDir(ctx); err != nil {
			return nil, false, err
		}
	}
	var b client.Backoff
	maybeApplied := false
	for dirs := 0; ; {
		_, listing, err := d.c.CreateListed(ctx, d.node(), nil, client.Ephemeral, d.cfg.CreateOptions()...)
		if err == nil {
			sawDir(d.c, d.dir)
		}
		switch {
		case err == nil, maybeApplied && errors.Is(err, client.ErrNodeExists):
			if !d.sess.Alive() {
				// Created under the client's next session: not ours to keep.
				d.abandonUnder(ctx, d.c.Session())
				return nil, maybeApplied, lost(d.c, d.dir, d.sess)
			}
			return listing, false, nil
		case errors.Is(err, client.ErrNoNode) && dirs < 3:
			dirs++
			if err := d.makeDir(ctx); err != nil {
				return nil, maybeApplied, err
			}
			continue
		case client.IsOutcomeUnknown(err) && ctx.Err() == nil:
			maybeApplied = true
		case client.IsOutcomeUnknown(err):
			d.abandon(ctx)
			return nil, true, d.wrap(err)
		case !client.IsRetryable(err):
			// An earlier attempt may have been applied (its reply lost):
			// this error, the context's say, says nothing of that node.
			if maybeApplied && d.sess.Alive() {
				d.abandon(ctx)
			}
			return nil, maybeApplied, d.wrap(err)
		}
		if err := recipes.Pause(ctx, d.c, d.sess, &b); err != nil {
			if maybeApplied && d.sess.Alive() {
				d.abandon(ctx)
			}
			return nil, maybeApplied, d.wrap(err)
		}
	}
}

// makeDir creates the barrier directory (a container, as Curator makes
// it, where the server has them) and its missing ancestors.
func (d *Double) makeDir(ctx context.Context) error {
	if err := recipes.CreateDir(ctx, d.c, d.dir, d.cfg.CreateOptions()...); err != nil {
		return d.wrap(err)
	}
	return nil
}

// await returns once the threshold is reached: this member counts count
// members and creates the ready node, or the ready watch fires. It never
// counts twice: once it has counted fewer than count members, only the
// watch, set before its node existed, decides. joined is the listing that
// came with the member's create, if any: the first look.
func (d *Double) await(ctx context.Context, opened <-chan client.WatchEvent, joined *client.Listing) error {
	for {
		var l listing
		if joined != nil {
			l, joined = d.listingOf(joined.Children, joined.Stat), nil
		} else {
			var err error
			if l, err = d.list(ctx, false); err != nil {
				return err
			}
		}
		if err := d.checkDir(ctx, l); err != nil {
			return err
		}
		members := l.members
		if !slices.Contains(members, d.name) {
			if !d.sess.Alive() {
				return lost(d.c, d.dir, d.sess)
			}
			return recipes.DeletedWhileWaiting(d.node())
		}
		// Only a listing of the whole round says who is lowest: a lower
		// member seen before the threshold may still vanish before it (its
		// session lost), leaving this one the round's lowest. Unsure, it
		// takes Leave's path for the lowest, which checks.
		d.first = members[0] == d.name || len(members) < d.count
		if len(members) < d.count {
			d.cfg.Logger.Debug("zkit: barrier: waiting for members", "path", d.dir, "members", len(members), "count", d.count)
			return d.wait(ctx, opened)
		}
		select {
		case ev := <-opened: // another member that counted them all was first
			if ev.Type == client.EventNotWatching {
				return lost(d.c, d.dir, d.sess)
			}
			return nil
		default:
		}
		done, err := d.open(ctx, members, l.stat.Version)
		if done || err != nil {
			return err
		}
	}
}

// open creates the ready node, with the roster as its data. The
// directory's version is checked in the same transaction, so that the
// roster records it exactly; if it moved, open reports false and the
// members are counted again.
func (d *Double) open(ctx context.Context, members []string, version int32) (bool, error) {
	r := &roster{Members: members, Version: version}
	data, _ := json.Marshal(r)
	if len(data) > d.c.MaxData(d.ready) {
		r, data = nil, nil // too many members to list: no loss accounting
	}
	var b client.Backoff
	for {
		_, err := d.c.Multi(ctx, client.CheckOp(d.dir, version), client.CreateOp(d.ready, data, client.Persistent, d.cfg.ACL...))
		switch {
		case err == nil:
			d.roster = r
			return true, nil
		case errors.Is(err, client.ErrNodeExists):
			return true, nil // another member opened it (or this one, if a reply was lost)
		case errors.Is(err, client.ErrBadVersion):
			return false, nil
		case client.IsRetryable(err), client.IsOutcomeUnknown(err) && ctx.Err() == nil:
		default:
			return false, d.wrap(err)
		}
		if err := recipes.Pause(ctx, d.c, d.sess, &b); err != nil {
			return false, d.wrap(err)
		}
	}
}

// listing is one look at the barrier directory.
type listing struct {
	members []string                 // member nodes, sorted by name (Curator's order)
	ready   bool                     // the ready node is there
	others  []string                 // children that are neither members nor ready
	foreign error                    // what the names show of another recipe's path (layout.DoubleBarrier)
	stat    *client.Stat             // the directory's Stat; nil when it does not exist
	changed <-chan client.WatchEvent // with a watch: fires when the children change
}

// checkDir refuses, with an error matching recipes.ErrOtherRecipe, a
// directory that l shows to be another recipe's (layout.DoubleBarrier):
// one that holds a queue recipe's or a semaphore's nodes, or whose data is
// not a barrier's (empty, or the JSON outcome a last member leaves; a
// counter's value, for one), which Leave would overwrite. Data of the
// length of a round's usual outcome (no member lost) is taken for one
// unread: no counter's value is that long, and a round on a path an
// earlier round used then sends no more than the first.
func (d *Double) checkDir(ctx context.Context, l listing) error {
	if l.foreign != nil {
		return l.foreign
	}
	if l.stat == nil || l.stat.DataLength == 0 || l.stat.DataLength == outcomeLen {
		return nil
	}
	var data []byte
	err := d.retry(ctx, func() (err error) {
		data, _, err = d.c.Get(ctx, d.dir)
		return err
	})
	switch {
	case errors.Is(err, client.ErrNoNode):
		return nil
	case err != nil:
		return err
	}
	return layout.DoubleBarrier.Check(layout.Sighting{Path: d.dir, Data: data})
}

// besideReady is the error for a directory whose listing l shows nodes
// that are no barrier's where a look found ready a moment before: a
// configuration's keys beside its flag, even if the listing no longer
// shows the flag.
func (l listing) besideReady(dir string) error {
	return layout.DoubleBarrier.Check(layout.Listed(dir, append(slices.Clip(l.others), readyName)))
}

// list looks at the directory, and with watch set leaves a watch on its
// children.
func (d *Double) list(ctx context.Context, watch bool) (listing, error) {
	var (
		children []string
		st       *client.Stat
		changed  <-chan client.WatchEvent
	)
	err := d.retry(ctx, func() (err error) {
		if watch {
			children, st, changed, err = d.c.ChildrenW(ctx, d.dir)
		} else {
			children, st, err = d.c.Children(ctx, d.dir)
		}
		return err
	})
	if errors.Is(err, client.ErrNoNode) {
		return listing{}, nil
	}
	if err != nil {
		return listing{}, err
	}
	l := d.listingOf(children, st)
	l.changed = changed
	return l, nil
}

// listingOf reads the directory's children (which it reuses) and Stat.
func (d *Double) listingOf(children []string, st *client.Stat) listing {
	l := listing{stat: st, ready: slices.Contains(children, readyName)}
	l.foreign = layout.DoubleBarrier.Check(layout.Listed(d.dir, children))
	for _, ch := range children {
		if ch != readyName && !isMember(ch) {
			l.others = append(l.others, ch)
		}
	}
	l.members = slices.DeleteFunc(children, func(n string) bool { return !isMember(n) })
	slices.Sort(l.members)
	return l
}

// wait blocks until w fires, with any event: which one does not matter to
// the callers. A watch dropped because the session ended is that loss.
func (d *Double) wait(ctx context.Context, w <-chan client.WatchEvent) error {
	return d.waitEither(ctx, w, nil)
}

// waitEither is wait for whichever of a and b fires first.
func (d *Double) waitEither(ctx context.Context, a, b <-chan client.WatchEvent) error {
	var ev client.WatchEvent
	select {
	case ev = <-a:
	case ev = <-b:
	case <-d.sess.Done():
		return lost(d.c, d.dir, d.sess)
	case <-ctx.Done():
		return d.wrap(ctx.Err())
	}
	if ev.Type == client.EventNotWatching {
		return lost(d.c, d.dir, d.sess)
	}
	return nil
}

// retry runs op until it fails with anything but a retryable error (the
// connection is down and op was not applied), pausing between attempts,
// while ctx and the member's session last.
func (d *Double) retry(ctx context.Context, op func() error) error {
	var b client.Backoff
	for {
		err := op()
		switch {
		case err == nil:
			return nil
		case client.IsSessionLost(err) && !d.sess.Alive():
			return lost(d.c, d.dir, d.sess)
		case !client.IsRetryable(err):
			return d.wrap(err)
		}
		if err := recipes.Pause(ctx, d.c, d.sess, &b); err != nil {
			return d.wrap(err)
		}
	}
}

// gone is the error for a member node that disappeared while its member
// was inside or entering.
func (d *Double) gone() error {
	if !d.sess.Alive() {
		return lost(d.c, d.dir, d.sess)
	}
	return fmt.Errorf("zkit: barrier %s: %w", d.node(), recipes.ErrNodeDeleted)
}

// abandon deletes the member node after a failure: now if ctx allows,
// otherwise in the background while the client lives.
func (d *Double) abandon(ctx context.Context) {
	d.discard(ctx, d.sess, d.node())
}

// abandonUnder deletes the member node under sess, a session newer than
// the member's, like abandon.
func (d *Double) abandonUnder(ctx context.Context, sess *client.Session) {
	if sess != nil && sess.Alive() {
		d.discard(ctx, sess, d.node())
	}
}

// discard deletes the member node path, owned by sess, as abandon does,
// and records it as stale unless it is known to be gone: its delete went
// to the background, or sess was lost, whose nodes the server deletes only
// once it has expired the session too.
func (d *Double) discard(ctx context.Context, sess *client.Session, path string) {
	err := recipes.Remove(ctx, d.c, sess, path, recipes.Removal{Logger: d.cfg.Logger})
	if err != nil || !sess.Alive() {
		d.stale = append(d.stale, path)
	}
}

// clearNodes deletes the stale member nodes under sess, the session the
// next node is to be created under, while ctx allows. A node of this
// member's is never anybody else's (its name is a fresh UUID), so it is
// deleted whoever owns it.
func (d *Double) clearNodes(ctx context.Context, sess *client.Session) error {
	for len(d.stale) > 0 {
		if err := recipes.Remove(ctx, d.c, sess, d.stale[0], recipes.Removal{Logger: d.cfg.Logger}); err != nil {
			return d.wrap(err)
		}
		if !sess.Alive() {
			return nil
		}
		d.stale = d.stale[1:]
	}
	return nil
}

// wrap names the barrier in an error that does not already.
func (d *Double) wrap(err error) error { return recipes.Wrap("barrier", d.dir, err) }
