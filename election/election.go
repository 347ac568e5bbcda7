package election

import (
	"context"
	"fmt"
	"log/slog"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

var (
	// ErrLost, ErrSuspended, ErrNodeDeleted and ErrReleased are package
	// recipes' sentinels, for matching a term's Err without importing it:
	// ErrLost is matched by every reason a term ended without Resign (its
	// session lost, also matching client.ErrSessionLost or, after Close,
	// client.ErrClosed; ErrSuspended; ErrNodeDeleted), ErrReleased after
	// Resign.
	ErrLost        = recipes.ErrLost
	ErrSuspended   = recipes.ErrSuspended
	ErrNodeDeleted = recipes.ErrNodeDeleted
	ErrReleased    = recipes.ErrReleased
)

// kind is the candidate node shape: "_c_<uuid>-latch-<seq>", as Curator's
// LeaderLatch creates it. Every candidate waits for every lower one.
var kind = recipes.LatchKind

// Election is one participant, named by its id, in the leader election at
// a ZooKeeper path. It is safe for concurrent use; every call to Campaign
// is a separate candidacy with a node of its own.
type Election struct {
	q   *recipes.Queue
	c   *client.Client
	id  string
	cfg config
}

// New returns the participant id in the election at path (a directory
// holding one node per candidacy). It does no I/O: the path is checked by
// Campaign, Leader and Observe, the id by Campaign. An Election used only
// to observe may have an empty id.
func New(c *client.Client, path, id string, opts ...Option) *Election {
	cfg := recipes.Apply(opts)
	return &Election{q: recipes.NewQueue(c, path, cfg.Logger, kind), c: c, id: id, cfg: cfg}
}

// Path is the election's directory.
func (e *Election) Path() string { return e.q.Dir() }

// ID is the participant's id.
func (e *Election) ID() string { return e.id }

// Campaign joins the election and waits until this participant leads,
// then returns its term. It returns an error instead when ctx ends first
// (ctx's error), for an invalid path or id (an *client.InputError, before
// anything is sent), when the candidate's node is deleted by someone else
// while it waits (an error matching ErrNodeDeleted), or once the client
// is closed (client.ErrClosed). Called while the client is between two
// sessions (just after one was lost), it waits within ctx for the next. A
// session lost while it waits costs the candidate only its place in line:
// it campaigns again, at the back, under the next session, until ctx ends
// (its old node is deleted: see recipes.Ticket.Rejoin).
//
// ctx bounds the wait to lead, not the term: once Campaign has returned,
// cancelling ctx changes nothing. The term lasts until Resign or until it
// is lost, and its own Context says when; run the leader's work under
// that.
//
// On every error the candidate's node is deleted, at once or, when that is
// not possible, in the background for as long as the client lives.
func (e *Election) Campaign(ctx context.Context) (*Term, error) {
	t, err := e.campaign(ctx, "campaign", nil)
	return t, recipes.Wrap("campaign", e.Path(), err)
}

// campaign is Campaign for the call op; with prev set it gives prev up in
// the same transaction as it joins (Term.Requeue).
func (e *Election) campaign(ctx context.Context, op string, prev *Term) (*Term, error) {
	if err := recipes.CheckDir(op, e.Path(), "election"); err != nil {
		return nil, err
	}
	if reason := checkID(e.id); reason != "" {
		return nil, &client.InputError{Op: op, Path: e.Path(), Reason: reason}
	}
	var (
		t   *recipes.Ticket
		err error
	)
	if prev != nil {
		t, err = e.q.Requeue(ctx, prev.lease, kind, []byte(e.id), e.cfg.ACL...)
	} else {
		t, err = e.q.Join(ctx, kind, []byte(e.id), e.cfg.ACL...)
	}
	if err != nil {
		return nil, err
	}
	for {
		if err := t.Wait(ctx); err != nil {
			t.Abandon(ctx)
			return nil, err
		}
		ok, err := t.Confirm(ctx)
		if err != nil {
			t.Abandon(ctx)
			return nil, err
		}
		if ok {
			break
		}
	}
	lease := t.Hold(recipes.LeaseOptions{SuspendTolerance: e.cfg.Tolerance(), Logger: e.cfg.Logger, PlainRelease: true})
	return &Term{lease: lease, e: e, id: e.id}, nil
}

// checkID returns why id cannot name a participant, or "". Ids are
// written as node data, read back by Go and Java peers and printed one per
// line, so they must be non-empty UTF-8 text without control characters.
// (Their size is the client's to check: the server's request limit.)
func checkID(id string) string {
	switch {
	case id == "":
		return "participant id is empty"
	case !utf8.ValidString(id):
		return "participant id is not valid UTF-8"
	}
	for i, r := range id {
		if unicode.IsControl(r) {
			return fmt.Sprintf("participant id has a control character %U at byte %d", r, i)
		}
	}
	return ""
}

// Option configures an Election.
type Option func(*config)

type config struct {
	recipes.Options
	requeuePause time.Duration // Run's pause between terms
}

// WithSuspendTolerance keeps a term across a suspended connection for up
// to d before it counts as lost. The default, 0, ends the term as soon as
// the connection is suspended: from then on the session may expire on the
// server at any moment and another candidate lead. With d > 0 a leader
// survives short network blips, but may go on leading for up to d after
// another candidate took over: fence its writes.
func WithSuspendTolerance(d time.Duration) Option {
	return func(c *config) { c.SuspendTolerance = d }
}

// WithACL gives the nodes this Election creates acl instead of the
// client's default ACL. A creator-only ACL (client.AuthACL(client.PermAll)
// with digest or x509 auth) keeps clients without the credentials from
// deleting a candidate's node, and so from deposing a leader.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.ACL = acl }
}

// WithLogger routes the election's log lines (lost terms, cleanup
// retries) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.Logger = l }
}
