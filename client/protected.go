package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ProtectedPrefix starts every protected node name, as in Curator.
const ProtectedPrefix = "_c_"

// protectedIDLen is the length of "_c_" + a canonical UUID + "-".
const protectedIDLen = len(ProtectedPrefix) + 36 + 1

// NewProtectedID returns a fresh protection id: a random (version 4) UUID in
// canonical form.
func NewProtectedID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ProtectedName returns the node name Curator's protection mode gives to name
// under protection id: "_c_<id>-<name>".
func ProtectedName(id, name string) string { return ProtectedPrefix + id + "-" + name }

// ParseProtected splits a node name made by ProtectedName into its
// protection id and the rest. ok is false for other names.
func ParseProtected(node string) (id, rest string, ok bool) {
	if len(node) < protectedIDLen || !strings.HasPrefix(node, ProtectedPrefix) || node[protectedIDLen-1] != '-' {
		return "", "", false
	}
	return node[len(ProtectedPrefix) : protectedIDLen-1], node[protectedIDLen:], true
}

// CreateProtected creates path with its last component renamed to
// ProtectedName(id, name), using a fresh id, and returns the created path.
//
// A create whose reply is lost (connection loss, a cut-off context) may have
// been applied. Instead of creating a second node, CreateProtected then syncs,
// lists the parent and adopts the node carrying its id, but only when the
// node's ephemeralOwner is the current session (for ephemeral modes). It
// retries while ctx and the session last. When it gives up, its error
// matches ErrOutcomeUnknown if a create it sent may have been applied: until
// the background delete described below (or, for ephemeral modes, the
// server's expiry of the session) the node may exist, and others may see it
// and act on it. Other errors mean that no node was created (but for
// ErrClosed: a create in flight when the client closed may have been
// applied).
//
// Having given up, it deletes in the background (while the client lives)
// whatever node it may have left, trying again through lost connections,
// replies and (for persistent nodes, or a session the client gave up while
// the server may keep it) sessions. An error that trying again cannot cure
// ends that cleanup with one warning (level Warn) on the client's logger
// naming the parent and the protection id: a parent whose listing is longer
// than the client reads (ErrReplyTooLarge), one the client may not list or
// delete in (ErrNoAuth), a node that has children by then (ErrNotEmpty).
// The node, if the create was applied, then stays for an operator to
// delete by hand.
//
// For ephemeral modes the session matters: if the session that would own the
// node is lost, CreateProtected fails with an error matching ErrSessionLost.
func (c *Client) CreateProtected(ctx context.Context, path string, data []byte, mode CreateMode, opts ...CreateOption) (string, error) {
	p, _, err := c.CreateProtectedZxid(ctx, path, data, mode, opts...)
	return p, err
}

// CreateProtectedZxid is CreateProtected that also returns the new node's
// czxid, the fencing token of a recipe's node, without reading the node:
// from the create's reply, or from the look-up after a lost reply.
func (c *Client) CreateProtectedZxid(ctx context.Context, path string, data []byte, mode CreateMode, opts ...CreateOption) (string, int64, error) {
	p, czxid, _, err := c.createProtected(ctx, path, data, mode, opts, false)
	return p, czxid, err
}

// CreateProtectedListed is CreateProtectedZxid that also lists the new
// node's parent, in the same round trip (listed.go): the listing shows the
// new node and every node created before it. A queue recipe learns its
// place from it without a second round trip.
//
// listing is nil when there is none: the create's reply was lost (the node
// was found by the look-up instead), the listing failed, or it does not
// show the new node (deleted at once by someone else). List the parent
// then.
func (c *Client) CreateProtectedListed(ctx context.Context, path string, data []byte, mode CreateMode, opts ...CreateOption) (created string, czxid int64, listing *Listing, err error) {
	return c.createProtected(ctx, path, data, mode, opts, true)
}

// createProtected is CreateProtectedListed, with the listing only when list
// is set.
func (c *Client) createProtected(ctx context.Context, path string, data []byte, mode CreateMode, opts []CreateOption, list bool) (string, int64, *Listing, error) {
	o, err := c.createOptions(path, data, mode, opts)
	if err != nil {
		return "", 0, nil, err
	}
	parent, name := SplitPath(path)
	if parent == "" {
		return "", 0, nil, &InputError{Op: "create", Path: path, Reason: "protected node needs a parent"}
	}
	id := NewProtectedID()
	full := JoinPath(parent, ProtectedName(id, name))
	sess, err := c.current()
	if err != nil {
		return "", 0, nil, err
	}
	for attempt := 0; ; attempt++ {
		listParent := ""
		if list && attempt == 0 {
			listParent = parent
		}
		made, listing, err := c.create(ctx, full, data, mode, o, listParent)
		if err == nil {
			return made.path, made.czxid, listing, nil
		}
		if !IsOutcomeUnknown(err) && !IsRetryable(err) {
			if IsSessionLost(err) && !mode.IsEphemeral() {
				c.cleanupProtected(parent, id, nil)
			}
			return "", 0, nil, err
		}
		// The create may have been applied: find out before creating again.
		found, czxid, ferr := c.resolveProtected(ctx, parent, id, sess, mode)
		if found != "" {
			return found, czxid, nil, nil
		}
		if ferr != nil {
			c.cleanupProtected(parent, id, sess)
			return "", 0, nil, fmt.Errorf("zkit: create %q: %w (after %w)", path, ferr, err)
		}
	}
}

// resolveProtected looks for the node carrying protection id until it gets
// a definite answer: the node's path, or "" when the create was not applied.
// It gives up with an error when ctx ends, the session that must own the
// node is lost, or the look-up fails for a reason retrying will not fix.
func (c *Client) resolveProtected(ctx context.Context, parent, id string, sess *Session, mode CreateMode) (string, int64, error) {
	backoff := 10 * time.Millisecond
	// Only an ephemeral node ends with sess: a persistent one outlives it,
	// and waiting on a lost session's closed Done would not wait at all.
	var lost <-chan struct{}
	if mode.IsEphemeral() {
		lost = sess.Done()
	}
	for {
		if mode.IsEphemeral() && !sess.Alive() {
			return "", 0, sess.Err()
		}
		found, czxid, err := c.findProtected(ctx, parent, id, sess, mode)
		if err == nil || !IsRetryable(err) {
			return found, czxid, err
		}
		select {
		case <-time.After(backoff):
			backoff = min(2*backoff, time.Second)
		case <-ctx.Done():
			return "", 0, ctx.Err()
		case <-lost:
		}
	}
}

// findProtected looks for the node carrying protection id under parent,
// after a sync so that the listing includes any create already applied.
func (c *Client) findProtected(ctx context.Context, parent, id string, sess *Session, mode CreateMode) (string, int64, error) {
	if err := c.Sync(ctx, parent); err != nil {
		return "", 0, err
	}
	children, _, err := c.Children(ctx, parent)
	if err != nil {
		return "", 0, err
	}
	for _, ch := range children {
		if cid, _, ok := ParseProtected(ch); !ok || cid != id {
			continue
		}
		p := JoinPath(parent, ch)
		ok, st, err := c.Exists(ctx, p)
		if err != nil {
			return "", 0, err
		}
		if ok && (!mode.IsEphemeral() || st.EphemeralOwner == sess.ID()) {
			return p, st.Czxid, nil
		}
	}
	return "", 0, nil
}

// cleanupProtected deletes, in the background and for as long as the client
// lives, every node under parent carrying protection id. For ephemeral nodes
// (sess != nil) it stops once the server has ended that session: the server
// removed them. A session the client gave up on its own clock may live on
// in the server, its nodes with it, until the server expires it: those are
// deleted under the next session. It tries again after an error that goes
// away by itself (IsTransient, a lost reply, an attempt that timed out);
// any other error (the parent's listing too large to read, no permission)
// would come back every time, so it gives up with a warning naming the
// parent and the id, for an operator to delete the node by hand.
func (c *Client) cleanupProtected(parent, id string, sess *Session) {
	c.Go(func(life context.Context) {
		backoff := 50 * time.Millisecond
		for {
			if sess != nil && !sess.Alive() && !givenUp(sess) {
				return
			}
			ctx, cancel := context.WithTimeout(life, 10*time.Second)
			err := c.deleteProtected(ctx, parent, id)
			timedOut := ctx.Err() != nil
			cancel()
			if err == nil || life.Err() != nil || errors.Is(err, ErrClosed) {
				return
			}
			if !timedOut && !IsTransient(err) && !IsOutcomeUnknown(err) {
				c.log.Warn("zkit: protected cleanup gave up: delete the node by hand",
					"parent", parent, "id", id, "node", JoinPath(parent, ProtectedName(id, "*")), "err", err)
				return
			}
			c.log.Debug("zkit: protected cleanup will retry", "parent", parent, "err", err)
			select {
			case <-time.After(backoff):
				backoff = min(2*backoff, 5*time.Second)
			case <-life.Done():
				return
			}
		}
	})
}

// givenUp reports whether sess ended because the client gave it up
// (disconnected for longer than its timeout), not because the server
// expired it or the client closed: the server may still have it.
func givenUp(sess *Session) bool {
	err := sess.Err()
	return err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrSessionExpired) && !errors.Is(err, errNewSession)
}

func (c *Client) deleteProtected(ctx context.Context, parent, id string) error {
	if err := c.Sync(ctx, parent); err != nil {
		return err
	}
	children, _, err := c.Children(ctx, parent)
	if errors.Is(err, ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ch := range children {
		if cid, _, ok := ParseProtected(ch); ok && cid == id {
			if err := c.Delete(ctx, JoinPath(parent, ch), -1); err != nil && !errors.Is(err, ErrNoNode) {
				return err
			}
		}
	}
	return nil
}

// SplitPath splits "/a/b/c" into "/a/b" and "c". The parent of a top-level
// node is "/"; the root has no parent ("").
func SplitPath(path string) (parent, name string) {
	i := strings.LastIndexByte(path, '/')
	switch {
	case i < 0 || path == "/":
		return "", path
	case i == 0:
		return "/", path[1:]
	}
	return path[:i], path[i+1:]
}

// JoinPath joins a parent path and a child name.
func JoinPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}
