package client

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/internal/jute"
)

// ReadOp is one read of a MultiRead. Build it with GetOp or ChildrenOp.
type ReadOp struct {
	op   int32 // getData or getChildren
	path string
}

// GetOp reads a node's data and Stat inside a MultiRead.
func GetOp(path string) ReadOp { return ReadOp{jute.OpGetData, path} }

// ChildrenOp reads the names of a node's children inside a MultiRead (in
// no particular order; ZooKeeper sends no Stat with them there).
func ChildrenOp(path string) ReadOp { return ReadOp{jute.OpGetChildren, path} }

// Path is the node the read reads.
func (o ReadOp) Path() string { return o.path }

// ReadResult is the outcome of one read of a MultiRead: Data and Stat for
// a GetOp, Children for a ChildrenOp, or Err.
type ReadResult struct {
	Data     []byte
	Stat     *Stat
	Children []string
	Err      error // nil, or why this read failed: ErrNoNode, ErrNoAuth, ...
}

// MultiRead reads with ops in one request, answered at one moment of the
// server's (ZooKeeper 3.6 and later: an older server answers
// ErrUnimplemented, and closes the connection; the session lives on).
// Unlike Multi, each read succeeds or fails on its own, as ZooKeeper
// answers them: a read of a node that does not exist has ErrNoNode as its
// Err, and the others their results. The error is the call's: nil when the
// server answered, whatever each read's outcome.
//
// The request is checked against the server's size limit (WithMaxBuffer)
// before anything is sent. The reply's size cannot be known before: when
// it is longer than the client reads (WithMaxBuffer + 64 KiB), the call
// fails with a *ReplyTooLargeError; read fewer nodes at once.
func (c *Client) MultiRead(ctx context.Context, ops ...ReadOp) ([]ReadResult, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	req := &jute.MultiRequest{Ops: make([]jute.MultiOp, len(ops))}
	size := requestOverhead
	for i, o := range ops {
		abs := c.abs(o.path)
		switch o.op {
		case jute.OpGetData:
			req.Ops[i] = jute.MultiOp{Type: o.op, Body: &jute.GetDataRequest{Path: abs}}
		case jute.OpGetChildren:
			req.Ops[i] = jute.MultiOp{Type: o.op, Body: &jute.GetChildrenRequest{Path: abs}}
		default:
			return nil, &InputError{Op: "multiRead", Reason: fmt.Sprintf("op %d is not built with GetOp or ChildrenOp", i)}
		}
		if err := c.checkPath(o.name(), o.path, false); err != nil {
			return nil, err
		}
		size += opSize(abs, nil, nil)
	}
	if size > c.cfg.maxBuffer {
		return nil, &InputError{Op: "multiRead", Path: ops[0].path, Reason: fmt.Sprintf(
			"%d reads of about %d bytes together: the request would exceed the server's %d-byte limit (jute.maxbuffer)",
			len(ops), size, c.cfg.maxBuffer)}
	}
	return doDirect(c, request{"multiRead", ops[0].path, false}, func() ([]ReadResult, error) {
		var resp jute.MultiResponse
		if _, err := direct(ctx, c, jute.OpMultiRead, req, &resp); err != nil {
			return nil, err
		}
		if len(resp.Results) != len(ops) {
			return nil, fmt.Errorf("zk: multiRead of %d reads answered with %d results", len(ops), len(resp.Results))
		}
		out := make([]ReadResult, len(ops))
		for i, r := range resp.Results {
			switch b := r.Body.(type) {
			case *jute.GetDataResponse:
				out[i].Data, out[i].Stat = b.Data, statOf(&b.Stat)
			case *jute.GetChildrenResponse:
				out[i].Children = b.Children
			}
			if r.Type == jute.OpError {
				out[i].Err = fmt.Errorf("%s: %w", named(ops[i].name(), ops[i].path), wireError(r.Err))
			}
		}
		return out, nil
	})
}

// name is the read's name in errors: as Get's or Children's.
func (o ReadOp) name() string {
	if o.op == jute.OpGetChildren {
		return "children"
	}
	return "get"
}
