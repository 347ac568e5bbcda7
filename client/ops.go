package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// CreateMode says what kind of znode Create makes.
type CreateMode int32

// Create modes, with ZooKeeper's numbering (the create request's flags).
const (
	Persistent              CreateMode = iota // lives until deleted
	Ephemeral                                 // deleted with the session that created it
	PersistentSequential                      // Persistent, its name followed by a sequence number
	EphemeralSequential                       // Ephemeral, its name followed by a sequence number
	Container                                 // deleted by the server some time after its last child
	PersistentTTL                             // deleted by the server once unchanged and childless for its TTL
	PersistentSequentialTTL                   // PersistentTTL, its name followed by a sequence number
)

var modeNames = [...]string{"Persistent", "Ephemeral", "PersistentSequential", "EphemeralSequential",
	"Container", "PersistentTTL", "PersistentSequentialTTL"}

func (m CreateMode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("CreateMode(%d)", int32(m))
}

// Sequential reports whether the server appends a sequence number.
func (m CreateMode) Sequential() bool {
	return m == PersistentSequential || m == EphemeralSequential || m == PersistentSequentialTTL
}

// IsEphemeral reports whether the node dies with the session.
func (m CreateMode) IsEphemeral() bool { return m == Ephemeral || m == EphemeralSequential }

func (m CreateMode) ttl() bool { return m == PersistentTTL || m == PersistentSequentialTTL }

func (m CreateMode) valid() bool { return m >= Persistent && m <= PersistentSequentialTTL }

// MaxTTL is the longest TTL ZooKeeper accepts (2^40-1 ms).
const MaxTTL = time.Duration(1<<40-1) * time.Millisecond

// CreateOption adjusts one Create.
type CreateOption func(*createOpts)

type createOpts struct {
	acl []ACL
	ttl time.Duration
	ops []Op // applied in one transaction with the create, after it
}

// WithACL sets the new node's ACL (default: the client's default ACL).
func WithACL(acl ...ACL) CreateOption { return func(o *createOpts) { o.acl = acl } }

// WithTTL sets the time-to-live of a PersistentTTL or PersistentSequentialTTL
// node: the server deletes it once it has had no children and no change for
// that long. The server must run with extendedTypesEnabled=true.
func WithTTL(d time.Duration) CreateOption { return func(o *createOpts) { o.ttl = d } }

// WithOps applies ops in one transaction with the create (a Multi), after
// it: the create and all of them, or none. An op that fails fails the
// create with a *MultiError naming it; nothing is applied. Container and
// TTL nodes cannot be created in a transaction. With CreateProtected and
// its variants a lost reply is resolved as for a plain create: the node
// found means the ops were applied with it, no node means none was (and
// the transaction is sent again). When it gives up with the outcome
// unknown, the node it deletes in the background may have come with the
// ops, and they stay applied: undo them yourself if they must not.
//
// A recipe uses it to hand something over in the same step as it takes
// its next place: a leader that steps down and rejoins the election
// deletes its node and creates the next one in one transaction.
func WithOps(ops ...Op) CreateOption { return func(o *createOpts) { o.ops = ops } }

func (c *Client) createOptions(path string, data []byte, mode CreateMode, opts []CreateOption) (createOpts, error) {
	o := createOpts{acl: c.cfg.defaultACL}
	for _, f := range opts {
		f(&o)
	}
	if !mode.valid() {
		return o, &InputError{Op: "create", Path: path, Reason: fmt.Sprintf("invalid create mode %d", int32(mode))}
	}
	if err := c.checkPath("create", path, mode.Sequential()); err != nil {
		return o, err
	}
	if err := c.checkData("create", path, data); err != nil {
		return o, err
	}
	if mode.ttl() && (o.ttl <= 0 || o.ttl > MaxTTL) {
		return o, &InputError{Op: "create", Path: path, Reason: fmt.Sprintf("%v needs a TTL in (0, %v], got %v", mode, MaxTTL, o.ttl)}
	}
	if !mode.ttl() && o.ttl != 0 {
		return o, &InputError{Op: "create", Path: path, Reason: fmt.Sprintf("TTL given for %v node", mode)}
	}
	// With o.ops, createAlong checks the transaction (Container and TTL
	// modes included) when it builds it, before anything is sent.
	return o, c.checkACL("create", path, o.acl)
}

// along is the transaction of a create with o.ops: the create, then the
// ops.
func (o createOpts) along(path string, data []byte, mode CreateMode) []Op {
	return append([]Op{CreateOp(path, data, mode, o.acl...)}, o.ops...)
}

// Create makes a znode and returns its path (with the sequence number, for
// sequential modes). A write cut off by connection loss or by ctx returns an
// *OutcomeUnknownError: the node may exist. For ephemeral-sequential nodes
// that matter, use CreateProtected.
func (c *Client) Create(ctx context.Context, path string, data []byte, mode CreateMode, opts ...CreateOption) (string, error) {
	o, err := c.createOptions(path, data, mode, opts)
	if err != nil {
		return "", err
	}
	made, _, err := c.create(ctx, path, data, mode, o, "")
	return made.path, err
}

// CreateStat is Create that also returns the new node's Stat, from the
// create's reply (ZooKeeper's create2): its Czxid, a recipe's fencing
// token, its Ctime and the rest, without reading the node. It does not
// take WithOps: ZooKeeper answers a create inside a transaction with its
// path alone (an *InputError says so, before anything is sent).
func (c *Client) CreateStat(ctx context.Context, path string, data []byte, mode CreateMode, opts ...CreateOption) (string, *Stat, error) {
	o, err := c.createOptions(path, data, mode, opts)
	if err != nil {
		return "", nil, err
	}
	if len(o.ops) > 0 {
		return "", nil, &InputError{Op: "create", Path: path, Reason: "CreateStat does not take WithOps: ZooKeeper returns no Stat for a create in a transaction"}
	}
	made, _, err := c.create(ctx, path, data, mode, o, "")
	return made.path, made.stat, err
}

// Get returns a znode's data and Stat.
func (c *Client) Get(ctx context.Context, path string) ([]byte, *Stat, error) {
	if err := c.checkPath("get", path, false); err != nil {
		return nil, nil, err
	}
	return c.get(ctx, request{"get", path, false}, c.abs(path))
}

// get reads the node at abs (as on the wire) for call r.
func (c *Client) get(ctx context.Context, r request, abs string) ([]byte, *Stat, error) {
	got, err := doDirect(c, r, func() (pair[[]byte], error) {
		var resp jute.GetDataResponse
		if _, err := direct(ctx, c, jute.OpGetData, &jute.GetDataRequest{Path: abs}, &resp); err != nil {
			return pair[[]byte]{}, err
		}
		return pair[[]byte]{resp.Data, statOf(&resp.Stat)}, nil
	})
	return got.v, got.stat, err
}

// GetW is Get plus a one-shot watch that fires when the node's data changes
// or the node is deleted.
func (c *Client) GetW(ctx context.Context, path string) ([]byte, *Stat, <-chan WatchEvent, error) {
	if err := c.checkPath("get", path, false); err != nil {
		return nil, nil, nil, err
	}
	return c.getW(ctx, request{"get", path, false}, c.abs(path))
}

// getW is get with a watch.
func (c *Client) getW(ctx context.Context, r request, abs string) ([]byte, *Stat, <-chan WatchEvent, error) {
	got, err := doDirect(c, r, func() (watched[[]byte], error) {
		var resp jute.GetDataResponse
		ch, err := watchCall(ctx, c, jute.OpGetData, abs, &jute.GetDataRequest{Path: abs, Watch: true}, &resp)
		if err != nil {
			return watched[[]byte]{}, err
		}
		return watched[[]byte]{resp.Data, statOf(&resp.Stat), ch}, nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return got.v, got.stat, got.ch, nil
}

// Set replaces a znode's data if its version matches (-1 matches any).
func (c *Client) Set(ctx context.Context, path string, data []byte, version int32) (*Stat, error) {
	if err := c.checkPath("set", path, false); err != nil {
		return nil, err
	}
	if err := c.checkData("set", path, data); err != nil {
		return nil, err
	}
	if err := checkVersion("set", path, version); err != nil {
		return nil, err
	}
	st, err := doDirect(c, request{"set", path, true}, func() (*Stat, error) {
		var resp jute.SetDataResponse
		if _, err := direct(ctx, c, jute.OpSetData, &jute.SetDataRequest{Path: c.abs(path), Data: data, Version: version}, &resp); err != nil {
			return nil, err
		}
		return statOf(&resp.Stat), nil
	})
	return st, err
}

// Delete removes a znode if its version matches (-1 matches any).
func (c *Client) Delete(ctx context.Context, path string, version int32) error {
	if err := c.checkPath("delete", path, false); err != nil {
		return err
	}
	if err := checkDeletable("delete", path); err != nil {
		return err
	}
	if err := checkVersion("delete", path, version); err != nil {
		return err
	}
	_, err := doDirect(c, request{"delete", path, true}, func() (struct{}, error) {
		_, err := direct(ctx, c, jute.OpDelete, &jute.DeleteRequest{Path: c.abs(path), Version: version}, nil)
		return struct{}{}, err
	})
	return err
}

// Exists reports whether a znode exists, with its Stat when it does.
func (c *Client) Exists(ctx context.Context, path string) (bool, *Stat, error) {
	if err := c.checkPath("exists", path, false); err != nil {
		return false, nil, err
	}
	r, err := doDirect(c, request{"exists", path, false}, func() (pair[bool], error) {
		var resp jute.ExistsResponse
		_, err := direct(ctx, c, jute.OpExists, &jute.ExistsRequest{Path: c.abs(path)}, &resp)
		switch {
		case errors.Is(err, ErrNoNode):
			return pair[bool]{false, &Stat{}}, nil
		case err != nil:
			return pair[bool]{}, err
		}
		return pair[bool]{true, statOf(&resp.Stat)}, nil
	})
	return r.v, r.stat, err
}

// ExistsW is Exists plus a one-shot watch that fires when the node is
// created, changed or deleted.
func (c *Client) ExistsW(ctx context.Context, path string) (bool, *Stat, <-chan WatchEvent, error) {
	if err := c.checkPath("exists", path, false); err != nil {
		return false, nil, nil, err
	}
	abs := c.abs(path)
	r, err := doDirect(c, request{"exists", path, false}, func() (watched[bool], error) {
		var resp jute.ExistsResponse
		ch, err := watchCall(ctx, c, jute.OpExists, abs, &jute.ExistsRequest{Path: abs, Watch: true}, &resp)
		switch {
		case errors.Is(err, ErrNoNode):
			return watched[bool]{false, &Stat{}, ch}, nil
		case err != nil:
			return watched[bool]{}, err
		}
		return watched[bool]{true, statOf(&resp.Stat), ch}, nil
	})
	if err != nil {
		return false, nil, nil, err
	}
	return r.v, r.stat, r.ch, nil
}

// Children returns the names of a znode's children (in no particular order)
// and the znode's Stat.
func (c *Client) Children(ctx context.Context, path string) ([]string, *Stat, error) {
	if err := c.checkPath("children", path, false); err != nil {
		return nil, nil, err
	}
	r, err := doDirect(c, request{"children", path, false}, func() (pair[[]string], error) {
		var resp jute.GetChildren2Response
		if _, err := direct(ctx, c, jute.OpGetChildren2, &jute.GetChildren2Request{Path: c.abs(path)}, &resp); err != nil {
			return pair[[]string]{}, err
		}
		return pair[[]string]{resp.Children, statOf(&resp.Stat)}, nil
	})
	return r.v, r.stat, err
}

// ChildrenW is Children plus a one-shot watch that fires when a child is
// created or deleted, or the node is deleted.
func (c *Client) ChildrenW(ctx context.Context, path string) ([]string, *Stat, <-chan WatchEvent, error) {
	if err := c.checkPath("children", path, false); err != nil {
		return nil, nil, nil, err
	}
	abs := c.abs(path)
	r, err := doDirect(c, request{"children", path, false}, func() (watched[[]string], error) {
		var resp jute.GetChildren2Response
		ch, err := watchCall(ctx, c, jute.OpGetChildren2, abs, &jute.GetChildren2Request{Path: abs, Watch: true}, &resp)
		if err != nil {
			return watched[[]string]{}, err
		}
		return watched[[]string]{resp.Children, statOf(&resp.Stat), ch}, nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return r.v, r.stat, r.ch, nil
}

// Sync makes the connected server catch up with the leader, so that reads
// after it see every write committed before it.
func (c *Client) Sync(ctx context.Context, path string) error {
	if err := c.checkPath("sync", path, false); err != nil {
		return err
	}
	_, err := doDirect(c, request{"sync", path, false}, func() (struct{}, error) {
		_, err := direct(ctx, c, jute.OpSync, &jute.SyncRequest{Path: c.abs(path)}, nil)
		return struct{}{}, err
	})
	return err
}

// GetACL returns a znode's ACL and Stat.
func (c *Client) GetACL(ctx context.Context, path string) ([]ACL, *Stat, error) {
	if err := c.checkPath("getACL", path, false); err != nil {
		return nil, nil, err
	}
	r, err := doDirect(c, request{"getACL", path, false}, func() (pair[[]ACL], error) {
		var resp jute.GetACLResponse
		if _, err := direct(ctx, c, jute.OpGetACL, &jute.GetACLRequest{Path: c.abs(path)}, &resp); err != nil {
			return pair[[]ACL]{}, err
		}
		return pair[[]ACL]{aclOf(resp.ACL), statOf(&resp.Stat)}, nil
	})
	return r.v, r.stat, err
}

// SetACL replaces a znode's ACL if its ACL version (Stat.Aversion) matches
// (-1 matches any).
func (c *Client) SetACL(ctx context.Context, path string, acl []ACL, version int32) (*Stat, error) {
	if err := c.checkPath("setACL", path, false); err != nil {
		return nil, err
	}
	if err := checkVersion("setACL", path, version); err != nil {
		return nil, err
	}
	if err := c.checkACL("setACL", path, acl); err != nil {
		return nil, err
	}
	st, err := doDirect(c, request{"setACL", path, true}, func() (*Stat, error) {
		var resp jute.SetACLResponse
		if _, err := direct(ctx, c, jute.OpSetACL, &jute.SetACLRequest{Path: c.abs(path), ACL: juteACL(acl), Version: version}, &resp); err != nil {
			return nil, err
		}
		return statOf(&resp.Stat), nil
	})
	return st, err
}

// AddAuth adds credentials to the session: the server authenticates the
// connection with them, and the client sends them again first on every new
// connection, before any call. Credentials the server accepted are kept,
// even when AddAuth returned with ctx's error before the answer came. When
// it fails with a retryable error, the connection ended before the server
// answered, and the credentials are not kept: call it again (the same
// credentials twice count once). The server refuses credentials it cannot
// check (a scheme it has no provider for) with ErrAuthFailed, and closes
// the connection: subscribers see StateAuthFailed, and the client
// reconnects to the same session, without those credentials.
func (c *Client) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	if scheme == "" {
		return &InputError{Op: "addAuth", Reason: "empty scheme"}
	}
	return c.addAuth(ctx, scheme, auth)
}

// addAuth sends credentials on the current connection (see conn.sendAuth):
// the connection keeps them (keepCredentials) when the server accepts them.
func (c *Client) addAuth(ctx context.Context, scheme string, auth []byte) error {
	a := authCred{scheme, slices.Clone(auth)}
	_, err := doDirect(c, request{"addAuth", "", false}, func() (struct{}, error) {
		cn, err := c.connection(ctx)
		if err != nil {
			return struct{}{}, err
		}
		ch, err := cn.sendAuth(ctx, a)
		if err != nil {
			return struct{}{}, err
		}
		_, err = (&pending{c, ch}).wait(ctx, nil)
		return struct{}{}, err
	})
	return err
}

type pair[T any] struct {
	v    T
	stat *Stat
}

// watched is what a watching call returns: its value, the node's Stat and
// the watch's channel.
type watched[T any] struct {
	v    T
	stat *Stat
	ch   <-chan WatchEvent
}

// EnsurePath creates path and any missing ancestors as empty persistent
// nodes, with the ACL of opts (default: the client's default ACL). Nodes
// that already exist are left as they are, ACL included.
//
// Creating a persistent node twice only answers NodeExists, so EnsurePath
// rides out what would stop a single create: a lost connection, a lost
// reply, a session replaced meanwhile. It waits for the client to be
// connected again and tries once more, until ctx ends (then it returns
// ctx's error, after the last one) or the client is closed.
//
// An ancestor deleted between its create and its child's (another process
// removing a directory it found empty, or the server reaping a container)
// is created again: EnsurePath starts over from the root, up to
// ensureRounds times, then returns the ErrNoNode.
func (c *Client) EnsurePath(ctx context.Context, path string, opts ...CreateOption) error {
	if err := c.checkPath("ensurePath", path, false); err != nil {
		return err
	}
	var exists bool
	err := c.Retry(ctx, func(ctx context.Context) (err error) {
		exists, _, err = c.Exists(ctx, path)
		return err
	})
	if err != nil || exists {
		return err
	}
	for range ensureRounds - 1 {
		if err := c.ensureFrom(ctx, path, opts); !errors.Is(err, ErrNoNode) {
			return err
		}
	}
	return c.ensureFrom(ctx, path, opts)
}

// ensureRounds bounds EnsurePath's starts from the root.
const ensureRounds = 10

// ensureFrom creates path's ancestors and path from the root down, each
// unless it exists.
func (c *Client) ensureFrom(ctx context.Context, path string, opts []CreateOption) error {
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		if err := c.CreateDir(ctx, path[:i], Persistent, opts...); err != nil {
			return err
		}
	}
	return nil
}

// CreateDir creates the empty node path with mode (Persistent or
// Container) unless it exists, and rides out lost connections, replies
// and sessions like EnsurePath: an empty directory created twice is still
// one directory. Its parent must exist (ErrNoNode otherwise).
func (c *Client) CreateDir(ctx context.Context, path string, mode CreateMode, opts ...CreateOption) error {
	if mode != Persistent && mode != Container {
		return &InputError{Op: "createDir", Path: path, Reason: fmt.Sprintf("mode %v: want Persistent or Container", mode)}
	}
	return c.Retry(ctx, func(ctx context.Context) error {
		_, err := c.Create(ctx, path, nil, mode, opts...)
		return dirCreated(ctx, err)
	})
}

// dirCreated turns the error of a directory's create into what Retry
// needs: nil when it exists (created by this call, or before), the
// connection's error (retryable) when the reply was lost.
func dirCreated(ctx context.Context, err error) error {
	var unknown *OutcomeUnknownError
	switch {
	case errors.Is(err, ErrNodeExists):
		return nil
	case errors.As(err, &unknown) && ctx.Err() == nil:
		return unknown.Err // the connection closed: try again
	}
	return err
}
