package recipes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/internal/recipekit"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Queue is a directory of ephemeral sequence nodes that take turns in
// sequence order: paper §2.5 (locks) and §2.6 (read/write locks), in
// Curator's node layout. The directory is created when missing, as a
// container that the server deletes once it is empty again; its parents
// as persistent nodes; all with the ACL of the nodes that join it (see
// Join).
type Queue struct {
	c         *client.Client
	dir       string
	kinds     []Kind
	layout    *layout.Recipe // whose refusals its joiners apply
	log       *slog.Logger
	beforeDir func(ctx context.Context) error // see BeforeDir
}

// NewQueue returns the queue in dir whose members are the nodes of kinds;
// children of other shapes are ignored, but for the marks of another
// recipe's path: another queue recipe's node before the joiner's, or the
// flag of a configuration or an open double barrier at the joiner's first
// listing, which make Join fail with ErrOtherRecipe. It does no I/O.
func NewQueue(c *client.Client, dir string, log *slog.Logger, kinds ...Kind) *Queue {
	return &Queue{c: c, dir: dir, kinds: kinds, layout: queueLayout(kinds), log: recipekit.Logger(log)}
}

// queueLayout is the layout of the recipe whose nodes kinds are, for its
// refusals: a lock's, a read/write lock's or an election's; for a recipe of
// another name, a lock's refusals under its name.
func queueLayout(kinds []Kind) *layout.Recipe {
	name := "queue"
	if len(kinds) > 0 {
		name = kinds[0].Recipe
	}
	if l := layout.Named(name); l != nil {
		return l
	}
	return &layout.Recipe{Name: name, Noun: name, Refuses: layout.Lock.Refuses}
}

// Dir is the queue's directory.
func (q *Queue) Dir() string { return q.dir }

// BeforeDir makes a Join call check before it creates the queue's missing
// directory, and fail with check's error, having written nothing: a recipe
// whose queue is a directory under its path (a semaphore's locks) checks
// there that its path is not another recipe's (a configuration's, say),
// at no cost while the directory is there. It returns q; set it before the queue
// is used.
func (q *Queue) BeforeDir(check func(ctx context.Context) error) *Queue {
	q.beforeDir = check
	return q
}

// AcquireOptions says what to acquire and how.
type AcquireOptions struct {
	Kind Kind   // the shape of the node to create
	Data []byte // its data
	// Try makes Acquire fail with ErrWouldBlock instead of waiting.
	Try bool
	// Options give the node's ACL (empty: the client's default) and the
	// lease's logger and suspend tolerance.
	Options
}

// Acquire joins the queue, waits for its turn and returns the held lease.
// A session lost while it waits costs it its place in line, not the call:
// it queues again under the client's next session (see Ticket.Wait).
//
// On every failure (ctx cancelled or timed out, Try and the turn has not
// come, the client closed, an error) the node is deleted: at once if
// possible, otherwise in the background for as long as the client lives.
func (q *Queue) Acquire(ctx context.Context, o AcquireOptions) (*Lease, error) {
	return q.acquire(ctx, o, nil)
}

// acquire is Acquire, for the first holder of b when b is not nil.
func (q *Queue) acquire(ctx context.Context, o AcquireOptions, b *batch) (*Lease, error) {
	t, err := q.Join(ctx, o.Kind, o.Data, o.ACL...)
	if err != nil {
		return nil, err
	}
	if o.Try && t.Blocked() {
		t.Abandon(ctx)
		return nil, ErrWouldBlock
	}
	if err := t.Wait(ctx); err != nil {
		t.Abandon(ctx)
		return nil, err
	}
	lo := o.Lease()
	lo.batch = b
	return t.Hold(lo), nil
}

// Ticket is one participant's node in a queue, from Join until it is held
// (Hold), given up (Abandon) or taken care of by its caller (Consumed).
type Ticket struct {
	q       *Queue
	sess    *client.Session
	path    string
	node    Node
	token   int64
	self    <-chan client.WatchEvent // one-shot watch on the ticket's own node
	known   []Node                   // lower nodes still to wait for, in no order
	listed  bool                     // known is what the last listing showed: nothing deduced since
	alone   bool                     // the last listing showed no other node of the queue
	placed  bool                     // a listing placed the ticket: its first was checked for a flag
	backoff client.Backoff
	data    []byte                // the node's data, and
	opts    []client.CreateOption // its ACL: to join again (Rejoin)
	joined  time.Time             // when Join was called: the start of the wait
	woke    time.Time             // when the last event on a lower node came
	span    trace.Span            // of the whole wait, from Join to Hold or Abandon
}

// Join creates the participant's node (a protected ephemeral sequential
// node "<dir>/_c_<uuid>-<marker><seq>") and lists the queue, both in one
// round trip (client.CreateProtectedListed). The create survives a lost
// reply without leaving a second node (see client.CreateProtected). The
// node gets acl, or the client's default ACL when acl is empty.
//
// A missing directory is created: its parents as persistent nodes, the
// directory itself as a container node where the server has them
// (ZooKeeper 3.5.3 and later, which deletes an emptied container within
// its znode.container.checkIntervalMs, a minute by default), otherwise as a
// persistent node. A directory deleted between its creation and the
// node's is created again.
//
// The directory, and any missing parent, is created with the same ACL.
// ZooKeeper checks the permission to delete a node on its parent, so it is
// the directory's ACL that decides who may delete a member's node: with a
// creator-only ACL (client.AuthACL, or DigestACL or X509ACL naming the
// members' identities) nobody else can delete, create or list nodes there,
// and every member must hold one of its identities. A directory that
// exists already keeps its ACL, and so do its ancestors: keep the
// directory's parent closed to others too, or once the directory is empty
// and gone (the server reaps an empty container) they could create it
// again with an open ACL.
func (q *Queue) Join(ctx context.Context, kind Kind, data []byte, acl ...client.ACL) (*Ticket, error) {
	return q.joinWith(ctx, kind, data, acl, nil)
}

// Requeue releases l, the held lease of a node of q, and joins q again at
// the back, as Unlock and Join would, but in one transaction when it can:
// the delete of l's node goes with the create of the new one
// (client.WithOps), which saves a request and leaves no moment in which
// the participant has no node in the queue. That is possible for a lease
// released with a plain delete (LeaseOptions.PlainRelease), held until now
// on the client's session and not shared by a Combiner's batch; otherwise,
// and when l's node is found gone, Requeue unlocks and joins in two steps.
// l ends as after Unlock: its Err is ErrReleased if it was held until
// Requeue, the cause of its loss if not. Errors are Join's.
func (q *Queue) Requeue(ctx context.Context, l *Lease, kind Kind, data []byte, acl ...client.ACL) (*Ticket, error) {
	var (
		t   *Ticket
		err error
	)
	joined := l.requeue(ctx, func(del client.Op) error {
		t, err = q.joinWith(ctx, kind, data, acl, []client.Op{del})
		return err
	})
	var me *client.MultiError
	if !joined || (errors.As(err, &me) && me.Index == 1) {
		// Released without the transaction, or l's node was gone:
		// nothing was created.
		return q.Join(ctx, kind, data, acl...)
	}
	return t, err
}

// joinWith is Join, with ops sent in one transaction with the create.
func (q *Queue) joinWith(ctx context.Context, kind Kind, data []byte, acl []client.ACL, ops []client.Op) (*Ticket, error) {
	if kind.Marker == "" || !slices.Contains(q.kinds, kind) {
		return nil, &client.InputError{Op: "join", Path: q.dir, Reason: fmt.Sprintf("node kind %+v is not one of the queue's", kind)}
	}
	if err := CheckDir("join", q.dir, kind.Recipe); err != nil {
		return nil, err
	}
	var opts []client.CreateOption
	if len(acl) > 0 {
		opts = append(opts, client.WithACL(acl...))
	}
	in := recipekit.InstrumentsOf(q.c)
	joined := time.Now()
	ctx, span := in.Start(ctx, kind.Recipe, "acquire", q.dir)
	t, err := q.joinLive(ctx, kind, data, opts, ops, span)
	if err != nil {
		in.Abandoned(kind.Recipe)
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return nil, err
	}
	t.joined, t.span = joined, span
	return t, nil
}

// joinLive is join, made again on the client's next session for as long
// as the session is replaced before the node is there; span gets the
// events.
func (q *Queue) joinLive(ctx context.Context, kind Kind, data []byte, opts []client.CreateOption, ops []client.Op, span trace.Span) (*Ticket, error) {
	for {
		t, err := q.join(ctx, kind, data, opts, ops)
		if err == nil {
			span.AddEvent("joined", trace.WithAttributes(attribute.String("zkit.node", t.path)))
			return t, nil
		}
		if !errors.Is(err, client.ErrSessionLost) || errors.Is(err, client.ErrClosed) || ctx.Err() != nil {
			return nil, err
		}
		// The session was replaced between the wait for it and the
		// node's creation: nothing is held yet, so start over on the next.
		span.AddEvent("session replaced: joining again")
	}
}

// join is one attempt of Join, on the current session; ops go in one
// transaction with the create.
func (q *Queue) join(ctx context.Context, kind Kind, data []byte, opts []client.CreateOption, ops []client.Op) (*Ticket, error) {
	dirOpts := opts // the directory's create: its ACL, not ops
	if len(ops) > 0 {
		opts = append(slices.Clip(opts), client.WithOps(ops...))
	}
	// Something new starts only on a live session: right after a session
	// loss, wait for the next one instead of failing.
	sess, err := q.c.WaitConnected(ctx)
	if err != nil {
		return nil, err
	}
	t := &Ticket{q: q, sess: sess, data: data, opts: dirOpts}
	var listing *client.Listing // the listing that came with the create, if any
	for creates := 0; ; creates++ {
		t.path, t.token, listing, err = q.c.CreateProtectedListed(ctx, client.JoinPath(q.dir, kind.Marker), data, client.EphemeralSequential, opts...)
		var me *client.MultiError
		if !errors.Is(err, client.ErrNoNode) || (errors.As(err, &me) && me.Index > 0) {
			break // an op sent with the create failed, not the create
		}
		// The directory is missing: never created, or an emptied
		// container that the server deleted, perhaps just now.
		if creates == maxDirCreates {
			err = fmt.Errorf("zkit: join %s: the directory went missing %d times: %w", q.dir, creates+1, err)
			break
		}
		if q.beforeDir != nil {
			if err = q.beforeDir(ctx); err != nil {
				break
			}
		}
		if err = CreateDir(ctx, q.c, q.dir, dirOpts...); err != nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	_, name := client.SplitPath(t.path)
	var ok bool
	if t.node, ok = ParseNode(name, kind); !ok {
		t.Abandon(ctx)
		return nil, fmt.Errorf("zkit: created %q, which is not a %q node", t.path, kind.Marker)
	}
	if err := t.start(ctx, listing); err != nil {
		t.Abandon(ctx)
		return nil, err
	}
	return t, nil
}

// start learns the ticket's place in the queue from the listing that came
// with the create (client.CreateProtectedListed), or from a listing of its
// own when there is none. A ticket first in line, created on
// the session it started with, needs nothing more: its token (the node's
// czxid) came with the create's reply, and its lease watches the node
// itself once it has been held a moment (lease.go), so that a lone client
// pays create and list (one round trip) and release. A ticket that must
// wait watches its own node too, which also gives the node's owner.
func (t *Ticket) start(ctx context.Context, listing *client.Listing) error {
	if t.q.c.Session() != t.sess {
		// The session changed around the create: let the node's Stat
		// tell (watchSelf checks its owner).
		return t.startWatched(ctx)
	}
	var err error
	if listing != nil {
		err = t.place(listing.Children)
	} else {
		err = t.relist(ctx)
	}
	if err != nil {
		return err
	}
	if !t.Blocked() || t.node.Kind.Confirmed {
		return nil // Wait watches the node itself if the wait lasts
	}
	return t.watchSelf(ctx)
}

// startWatched watches the ticket's own node while listing the queue: two
// requests, one round trip.
func (t *Ticket) startWatched(ctx context.Context) error {
	var (
		wg   sync.WaitGroup
		wErr error
	)
	wg.Go(func() { wErr = t.watchSelf(ctx) })
	lErr := t.relist(ctx)
	wg.Wait()
	if wErr != nil {
		return wErr
	}
	return lErr
}

// watchSelf sets the watch on the ticket's own node, and takes the token
// from its Stat once it knows the node is the ticket session's.
func (t *Ticket) watchSelf(ctx context.Context) error {
	var (
		st  *client.Stat
		err error
		b   client.Backoff
	)
	for {
		_, st, t.self, err = t.q.c.GetW(ctx, t.path)
		if !client.IsRetryable(err) || b.Wait(ctx) != nil {
			break
		}
	}
	if errors.Is(err, client.ErrNoNode) {
		return t.gone()
	}
	if err != nil {
		return err
	}
	if st.EphemeralOwner != t.sess.ID() {
		// Created under a newer session than the one this ticket started
		// with: that one was lost meanwhile.
		if s := recipekit.NewerOwner(t.q.c, t.sess, st); s != nil {
			Remove(done, t.q.c, s, t.path, Removal{Logger: t.q.log})
		}
		return LostSession(t.q.c, nil)
	}
	t.token = st.Czxid
	return nil
}

// Node is the ticket's own node name and sequence number.
func (t *Ticket) Node() Node { return t.node }

// Path is the full path of the ticket's node.
func (t *Ticket) Path() string { return t.path }

// Session is the session that owns the ticket's node.
func (t *Ticket) Session() *client.Session { return t.sess }

// Blocked reports whether lower nodes remain to wait for, as far as the
// ticket knows.
func (t *Ticket) Blocked() bool { return len(t.known) > 0 }

// Wait blocks until the ticket's turn has come: no lower node that blocks
// it is left. It watches one node at a time, the highest of those, so that a
// release wakes one waiter, and lists the directory again only when the
// node it watched went away without the release signal while other lower
// nodes were known (then one listing replaces a walk of many).
//
// A ticket watches its own node while it waits, so that a foreign delete
// of it ends the wait at once. A ticket of a Confirmed kind, whose turn is
// checked by a listing anyway, sets that watch only once it has waited for
// confirmedSelfDelay: a short wait (a leader handing over to the next
// candidate) costs one request less, and a long one learns of the delete
// at most that much later.
//
// A ticket whose session is lost while it waits has lost its place in
// line and nothing else: Wait joins the queue again, at the back, under
// the client's next session (see Rejoin), and waits on. Session, Path and
// Node then tell the new node. A turn that came on a session found lost
// is no turn either: Wait queues again rather than return.
//
// It returns ctx's error when ctx ends, client.ErrClosed once the client
// is closed, and an error matching ErrNodeDeleted (DeletedWhileWaiting)
// when someone else deletes the ticket's own node. It does not delete the
// node on failure: call Abandon.
func (t *Ticket) Wait(ctx context.Context) error {
	for {
		err := t.walk(ctx)
		if err == nil {
			if t.sess.Alive() {
				return nil
			}
			err = LostSession(t.q.c, t.sess.Err())
		}
		if err := t.Rejoin(ctx, err); err != nil {
			return err
		}
	}
}

// walk is one wait on the ticket's session: it returns nil once no lower
// node that blocks the ticket is left, or the error that ended it.
func (t *Ticket) walk(ctx context.Context) error {
	var arm <-chan time.Time
	if t.self == nil && len(t.known) > 0 {
		timer := time.NewTimer(confirmedSelfDelay)
		defer timer.Stop()
		arm = timer.C
	}
	for len(t.known) > 0 {
		p := t.highest()
		t.event("queued", p.Name)
		_, _, ch, err := t.q.c.GetW(ctx, client.JoinPath(t.q.dir, p.Name))
		switch {
		case errors.Is(err, client.ErrNoNode):
			if err := t.vanished(ctx); err != nil {
				return err
			}
			continue
		case client.IsRetryable(err):
			if err := Pause(ctx, t.q.c, t.sess, &t.backoff); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		t.backoff.Reset()
		if err := t.await(ctx, p, ch, &arm); err != nil {
			return err
		}
	}
	return nil
}

// confirmedSelfDelay is how long a waiting ticket of a Confirmed kind goes
// without a watch on its own node.
const confirmedSelfDelay = time.Second

// await waits for the event of ch, the watch on p (the lower node the
// ticket waits for), and applies it; when arm fires first, it sets the
// watch on the ticket's own node and goes on waiting.
func (t *Ticket) await(ctx context.Context, p Node, ch <-chan client.WatchEvent, arm *<-chan time.Time) error {
	for {
		select {
		case <-*arm:
			*arm = nil
			if err := t.watchSelf(ctx); err != nil {
				return err
			}
			continue
		case ev := <-ch:
			t.woke = time.Now()
			t.event("woke", ev.Type.String())
			switch ev.Type {
			case client.EventNodeDataChanged:
				t.released(p)
			case client.EventNotWatching:
				return LostSession(t.q.c, ev.Err)
			default:
				return t.vanished(ctx)
			}
			return nil
		case ev := <-t.self:
			if ev.Type == client.EventNotWatching {
				return LostSession(t.q.c, ev.Err)
			}
			return t.gone()
		case <-t.sess.Done():
			return LostSession(t.q.c, t.sess.Err())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// released applies the release signal of p: p held, so every node that p
// waited for is gone too.
func (t *Ticket) released(p Node) {
	kept := t.known[:0]
	for _, n := range t.known {
		if n.Name != p.Name && !n.Blocks(p) {
			kept = append(kept, n)
		}
	}
	t.known = kept
	t.listed = false
}

// highest returns the highest lower node still to wait for: the one to
// watch.
func (t *Ticket) highest() Node {
	h := t.known[0]
	for _, n := range t.known[1:] {
		if h.Before(n) {
			h = n
		}
	}
	return h
}

// vanished handles the highest known lower node going away without the
// release signal. If it was the last one, the turn has come: no lower node
// can appear after the ticket's own (nodes are in creation order,
// Node.Before). Otherwise one listing tells which of the others are left.
func (t *Ticket) vanished(ctx context.Context) error {
	if len(t.known) == 1 {
		t.known = t.known[:0]
		t.listed = false
		return nil
	}
	return t.relist(ctx)
}

// relist lists the directory and recomputes the lower nodes to wait for.
func (t *Ticket) relist(ctx context.Context) error {
	for {
		children, _, err := t.q.c.Children(ctx, t.q.dir)
		if client.IsRetryable(err) {
			if err := Pause(ctx, t.q.c, t.sess, &t.backoff); err != nil {
				return err
			}
			continue
		}
		if errors.Is(err, client.ErrNoNode) {
			return t.gone()
		}
		if err != nil {
			return err
		}
		t.backoff.Reset()
		return t.place(children)
	}
}

// place learns, from a listing of the directory, the lower nodes that block
// the ticket. A listing without the ticket's node means it is gone; one
// that shows the path to be another recipe's is ErrOtherRecipe (see
// foreign).
func (t *Ticket) place(children []string) error {
	// One pass, no sort: a queue may hold thousands of nodes, and only the
	// lower ones that block this ticket matter.
	if cap(t.known) < len(children) {
		t.known = make([]Node, 0, len(children))
	}
	t.known = t.known[:0]
	found, others := false, 0
	for _, ch := range children {
		n, ok := ParseNode(ch, t.q.kinds...)
		switch {
		case !ok:
			if err := t.foreign(ch); err != nil {
				return err
			}
		case n.Seq == t.node.Seq && n.Name == t.node.Name:
			found = true
		case n.Blocks(t.node):
			t.known = append(t.known, n)
			others++
		default:
			others++
		}
	}
	if !found {
		return t.gone()
	}
	t.listed, t.alone, t.placed = true, others == 0, true
	return nil
}

// foreign refuses the path for ch, a child of the directory that is none of
// the queue's nodes, when ch shows it to be another recipe's (the queue's
// layout's Check): another queue recipe's node that came before the
// ticket's, or the flag of a configuration or of a double barrier at the
// ticket's first listing. A node that came after the ticket's belongs to a
// participant that finds the ticket's node before its own and refuses the
// path, as does a recipe that raises its flag beside the ticket's node:
// they disturb nobody already here.
func (t *Ticket) foreign(ch string) error {
	seen := layout.See(layout.Child{Name: ch})
	switch {
	case !seen.Signs.Any(t.q.layout.Refuses):
		return nil
	case seen.Signs.Has(layout.SignQueueNode) && t.node.Before(Node{Seq: seen.Seq}):
		return nil
	case seen.Signs.Has(layout.SignFlag) && t.placed:
		return nil
	}
	return t.q.layout.Check(layout.Sighting{Path: t.q.dir, Children: []layout.Child{{Name: ch}}})
}

// gone reports that the ticket's own node is missing: deleted by someone
// else, or with its session, which Close ends after the server has
// deleted the session's nodes (and told this client of it).
func (t *Ticket) gone() error {
	if !t.sess.Alive() {
		return LostSession(t.q.c, t.sess.Err())
	}
	return lossCause(t.q.c, DeletedWhileWaiting(t.path))
}

// Rejoin handles err, what ended a wait of the ticket: Wait's, Confirm's,
// or a recipe's own wait after the ticket's turn came (a semaphore's wait
// for a free lease). When err is the loss of the ticket's session while
// the client and ctx live on (Requeueable; the client ends the session by
// then, or within its timeout), the ticket had held nothing, and has lost
// only its place in line. Rejoin then deletes its node (under
// the client's next session if the server may still keep the old one: see
// Remove), joins the queue again at the back under the next session, as
// Join does, and returns nil: call Wait again. Its node, Session and Path
// are then the new one's; the wait's span and its start go on, with a
// "requeued" event, and zkit.recipe.requeued counts it.
//
// Otherwise, or when joining again fails, Rejoin returns the error to end
// the wait with (WaitError: client.ErrClosed once the client is closed,
// ctx's error for a session lost after ctx ended), and the ticket is as
// it was: call Abandon.
func (t *Ticket) Rejoin(ctx context.Context, err error) error {
	if !Requeueable(ctx, t.q.c, err) {
		return WaitError(ctx, t.q.c, err)
	}
	// Told of the loss just before the client ended the session, maybe;
	// one it has not ended within the session timeout was none.
	timer := time.NewTimer(t.sess.Timeout())
	defer timer.Stop()
	select {
	case <-t.sess.Done():
	case <-timer.C:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
	Remove(ctx, t.q.c, t.sess, t.path, Removal{Logger: t.q.log})
	kind := t.node.Kind
	t.event("requeued", t.path)
	recipekit.InstrumentsOf(t.q.c).Requeued(kind.Recipe)
	t.q.log.Info("zkit: session lost while waiting: queuing again under the next session",
		"dir", t.q.dir, "node", t.path, "cause", t.sess.Err())
	n, err := t.q.joinLive(ctx, kind, t.data, t.opts, nil, t.spanOrNoop())
	if err != nil {
		return WaitError(ctx, t.q.c, err)
	}
	n.joined, n.woke, n.span = t.joined, t.woke, t.span
	*t = *n
	return nil
}

// spanOrNoop is the wait's span, or one that records nothing once the
// wait's span has ended.
func (t *Ticket) spanOrNoop() trace.Span {
	if t.span == nil {
		return noop.Span{}
	}
	return t.span
}

// Abandon gives up the ticket and deletes its node: now while ctx allows,
// otherwise in the background for as long as the client lives.
func (t *Ticket) Abandon(ctx context.Context) {
	Remove(ctx, t.q.c, t.sess, t.path, Removal{Logger: t.q.log})
	if t.span != nil {
		recipekit.InstrumentsOf(t.q.c).Abandoned(t.node.Kind.Recipe)
		t.span.SetStatus(codes.Error, "abandoned")
		t.span.End()
		t.span = nil
	}
}

// event adds an event to the wait's span, with the node it concerns.
func (t *Ticket) event(name, detail string) {
	if t.span != nil {
		t.span.AddEvent(name, trace.WithAttributes(attribute.String("zkit.detail", detail)))
	}
}

// Hold turns a ticket whose turn has come (Wait returned nil, or Blocked is
// false) into a held Lease.
func (t *Ticket) Hold(o LeaseOptions) *Lease {
	if o.Logger == nil {
		o.Logger = t.q.log
	}
	if t.alone {
		// Nobody behind the node knows of another one: the release signal
		// would tell them nothing (see the package documentation).
		o.PlainRelease = true
	}
	t.Consumed()
	return newLease(t, o)
}

// Consumed ends the wait of a ticket whose turn has come and whose node
// its caller takes care of itself instead of holding it with Hold: a
// semaphore's attempt deletes its mutex node in the transaction that
// creates its leases. It records the hold taken and ends the wait's span,
// as Hold does; an Abandon after it deletes the node and records nothing
// more.
func (t *Ticket) Consumed() {
	if t.span != nil {
		recipekit.InstrumentsOf(t.q.c).Acquired(t.node.Kind.Recipe, t.joined, t.woke)
		t.span.SetAttributes(attribute.Int64("zkit.token", TokenOf(t.token)))
		t.span.End()
		t.span = nil
	}
}
