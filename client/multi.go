package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Op is one operation of a Multi. Build it with CreateOp, SetOp, DeleteOp or
// CheckOp.
type Op struct {
	kind    opKind
	path    string
	data    []byte
	version int32
	mode    CreateMode
	acl     []ACL
}

type opKind int

const (
	opCreate opKind = iota + 1
	opSet
	opDelete
	opCheck
)

var opNames = map[opKind]string{opCreate: "create", opSet: "set", opDelete: "delete", opCheck: "check"}

// CreateOp creates a node inside a Multi. Container and TTL modes are not
// allowed in a Multi. With no acl, the client's default ACL is used.
func CreateOp(path string, data []byte, mode CreateMode, acl ...ACL) Op {
	return Op{kind: opCreate, path: path, data: data, mode: mode, acl: acl}
}

// SetOp sets a node's data inside a Multi if its version matches.
func SetOp(path string, data []byte, version int32) Op {
	return Op{kind: opSet, path: path, data: data, version: version}
}

// DeleteOp deletes a node inside a Multi if its version matches.
func DeleteOp(path string, version int32) Op {
	return Op{kind: opDelete, path: path, version: version}
}

// CheckOp makes a Multi fail unless path exists with this version (-1: any
// version, so it only checks that the node exists).
func CheckOp(path string, version int32) Op {
	return Op{kind: opCheck, path: path, version: version}
}

// Path is the node the op acts on.
func (o Op) Path() string { return o.path }

// OpResult is the outcome of one op of a Multi.
type OpResult struct {
	Path string // the created path, for a create
	Stat *Stat  // the new Stat, for a set
	Err  error  // nil, or why this op failed (ErrRolledBack for ops undone because another failed)
}

// MultiError reports a Multi that was not applied: op Index failed with Err.
type MultiError struct {
	Index int
	Op    string
	Path  string
	Err   error
}

func (e *MultiError) Error() string {
	return fmt.Sprintf("zkit: multi op %d (%s %q): %v", e.Index, e.Op, e.Path, e.Err)
}

// Unwrap returns the failing op's error, so errors.Is(err, ErrBadVersion) works.
func (e *MultiError) Unwrap() error { return e.Err }

func (c *Client) checkOp(i int, o Op) error {
	name, ok := opNames[o.kind]
	if !ok {
		return &InputError{Op: "multi", Reason: fmt.Sprintf("op %d is not built with CreateOp, SetOp, DeleteOp or CheckOp", i)}
	}
	if err := c.checkPath(name, o.path, o.kind == opCreate && o.mode.Sequential()); err != nil {
		return err
	}
	switch o.kind {
	case opCreate:
		if !o.mode.valid() || o.mode == Container || o.mode.ttl() {
			return &InputError{Op: "create", Path: o.path, Reason: fmt.Sprintf("mode %v is not allowed in a multi", o.mode)}
		}
		if len(o.acl) > 0 {
			if err := c.checkACL(name, o.path, o.acl); err != nil {
				return err
			}
		}
		return c.checkData(name, o.path, o.data)
	case opSet:
		if err := c.checkData(name, o.path, o.data); err != nil {
			return err
		}
	case opDelete:
		if err := checkDeletable(name, o.path); err != nil {
			return err
		}
	}
	return checkVersion(name, o.path, o.version)
}

// opSize bounds what one op adds to a multi request on the wire: its
// header, path, data and ACL with their lengths.
func opSize(path string, data []byte, acl []ACL) int {
	n := 32 + len(path) + len(data)
	for _, a := range acl {
		n += 16 + len(a.Scheme) + len(a.ID)
	}
	return n
}

// opReplySize bounds what one op adds to a multi's reply: its result's
// header (9 bytes), then a create's path (with a sequence number of up to
// 11 characters), a set's Stat (68 bytes), or an error code.
func opReplySize(o Op, abs string) int {
	switch o.kind {
	case opCreate:
		return 9 + 4 + len(abs) + 11
	case opSet:
		return 9 + 68
	}
	return 9 + 4
}

// Multi applies ops atomically: all of them or none. The whole request is
// checked against the server's size limit (WithMaxBuffer) before anything
// is sent, like each op's data, and so is its reply against the longest
// reply the client reads (WithMaxBuffer + 64 KiB): a set's reply carries a
// Stat, longer than a set without data, so some fifteen thousand sets fit
// in a request but not in its reply. On failure it returns the per-op
// results and a *MultiError naming the op that failed. A Multi cut off by
// connection loss or ctx returns an *OutcomeUnknownError.
func (c *Client) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	if c.life.Err() != nil {
		return nil, fmt.Errorf("zkit: multi %q: %w", ops[0].path, ErrClosed)
	}
	req, err := c.multiRequest(ops)
	if err != nil {
		return nil, err
	}
	resp, err := doDirect(c, request{"multi", ops[0].path, true}, func() ([]OpResult, error) {
		var resp jute.MultiResponse
		if _, err := direct(ctx, c, jute.OpMulti, req, &resp); err != nil {
			return nil, err
		}
		return multiResults(resp.Results)
	})
	return c.multiOutcome(ops, resp, err)
}

// CheckMulti returns the error that Multi(ctx, ops...) would return
// before sending anything, and sends nothing: an *InputError for an op
// that is not valid, for ops over the server's size limit together
// (WithMaxBuffer), or for ops whose reply could be longer than the client
// reads; an error matching ErrClosed once the client is closed; or nil. A
// recipe whose Multi comes after other requests checks it first, so that
// input the Multi would refuse leaves nothing behind.
func (c *Client) CheckMulti(ops ...Op) error {
	if len(ops) == 0 {
		return nil
	}
	_, err := c.multiRequest(ops)
	return err
}

// multiRequest checks ops, each and together against the server's size
// limit, and their reply against the client's, and returns the request
// that applies them.
func (c *Client) multiRequest(ops []Op) (*jute.MultiRequest, error) {
	reqs := make([]jute.MultiOp, len(ops))
	size := requestOverhead
	reply := 16 + 9 // the reply header and the end marker
	for i, o := range ops {
		if err := c.checkOp(i, o); err != nil {
			return nil, err
		}
		acl := o.acl
		if o.kind == opCreate && len(acl) == 0 {
			acl = c.cfg.defaultACL
		}
		abs := c.abs(o.path)
		size += opSize(abs, o.data, acl) // the path as the server gets it
		reply += opReplySize(o, abs)
		switch o.kind {
		case opCreate:
			reqs[i] = jute.MultiOp{Type: jute.OpCreate, Body: &jute.CreateRequest{Path: abs, Data: o.data, ACL: juteACL(acl), Flags: int32(o.mode)}}
		case opSet:
			reqs[i] = jute.MultiOp{Type: jute.OpSetData, Body: &jute.SetDataRequest{Path: abs, Data: o.data, Version: o.version}}
		case opDelete:
			reqs[i] = jute.MultiOp{Type: jute.OpDelete, Body: &jute.DeleteRequest{Path: abs, Version: o.version}}
		case opCheck:
			reqs[i] = jute.MultiOp{Type: jute.OpCheck, Body: &jute.CheckVersionRequest{Path: abs, Version: o.version}}
		}
	}
	if size > c.cfg.maxBuffer {
		return nil, &InputError{Op: "multi", Path: ops[0].path, Reason: fmt.Sprintf(
			"%d ops of about %d bytes together: the request would exceed the server's %d-byte limit (jute.maxbuffer)",
			len(ops), size, c.cfg.maxBuffer)}
	}
	if limit := c.cfg.maxBuffer + wireSlack; reply > limit {
		return nil, &InputError{Op: "multi", Path: ops[0].path, Reason: fmt.Sprintf(
			"%d ops with a reply of up to %d bytes: more than the %d the client reads (WithMaxBuffer + 64 KiB)",
			len(ops), reply, limit)}
	}
	return &jute.MultiRequest{Ops: reqs}, nil
}

// multiOutcome turns the reply to a multi of ops (resp, the results with
// the server's paths, and err as settled) into the results and the error
// Multi returns.
func (c *Client) multiOutcome(ops []Op, resp []OpResult, err error) ([]OpResult, error) {
	if err != nil && len(resp) != len(ops) {
		return nil, err
	}
	var first *MultiError
	for i := range resp {
		r := &resp[i]
		r.Path = c.rel(r.Path)
		if r.Err != nil && first == nil && r.Err != ErrRolledBack {
			first = &MultiError{Index: i, Op: opNames[ops[i].kind], Path: ops[i].path, Err: r.Err}
		}
	}
	if first != nil {
		return resp, first
	}
	if err != nil {
		return resp, &MultiError{Index: -1, Op: "multi", Err: err}
	}
	return resp, nil
}

// ErrRolledBack is the result of an op that was undone because another op
// of the same Multi failed (ZooKeeper's RuntimeInconsistency, code -2).
var ErrRolledBack = errors.New("zkit: rolled back: another op of the multi failed")

// multiResults turns a multi's results into OpResults (with the server's
// paths), with the first op's error as the error.
func multiResults(results []jute.MultiResult) ([]OpResult, error) {
	out := make([]OpResult, len(results))
	var first error
	for i, r := range results {
		switch b := r.Body.(type) {
		case *jute.CreateResponse:
			out[i].Path = b.Path
		case *jute.SetDataResponse:
			out[i].Stat = statOf(&b.Stat)
		}
		if r.Type == jute.OpError && r.Err != 0 {
			out[i].Err = wireError(r.Err)
			if r.Err == int32(jute.ErrRuntimeInconsistency) {
				out[i].Err = ErrRolledBack
			}
			if first == nil {
				first = out[i].Err
			}
		}
	}
	return out, first
}
