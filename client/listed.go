package client

import (
	"context"
	"slices"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Creates listed in the same round trip.
//
// A recipe that creates a node in a directory usually lists the directory
// next, to learn where its node stands. ZooKeeper answers a session's
// requests in the order they were sent, so the listing need not wait for
// the create's reply: written right behind the create, it is answered right
// after it and shows the new node and everything created before it, which
// saves the recipe a round trip.

// Listing is a node's children and Stat, as one listing saw them.
type Listing struct {
	Children []string
	Stat     *Stat
}

// created is what a create made: the node's path, its czxid, and its Stat
// (nil for a create in a transaction: ZooKeeper answers a create inside a
// multi with the path alone, whatever its opcode).
type created struct {
	path  string
	czxid int64
	stat  *Stat
}

// create makes a node (Create, with the options already checked). A create
// alone is a create2, whose reply carries the new node's Stat
// (createContainer and createTTL always do); a create with o.ops takes
// its czxid from the reply's zxid (a write's reply carries the zxid of its
// own transaction: ZooKeeper applies writes one at a time and answers each
// right after applying it). With list set it lists that node (the new
// node's parent) right behind the create; the listing is nil when the
// create or the listing failed, or when the listing does not show the new
// node (it went out on another connection than the create, or someone
// deleted the node at once).
func (c *Client) create(ctx context.Context, path string, data []byte, mode CreateMode, o createOpts, list string) (created, *Listing, error) {
	if len(o.ops) > 0 {
		return c.createAlong(ctx, path, data, mode, o, list)
	}
	abs := c.abs(path)
	op, req := jute.OpCreate2, any(&jute.CreateRequest{Path: abs, Data: data, ACL: juteACL(o.acl), Flags: int32(mode)})
	switch {
	case mode == Container:
		op = jute.OpCreateContainer
	case mode.ttl():
		op, req = jute.OpCreateTTL, &jute.CreateTTLRequest{Path: abs, Data: data, ACL: juteACL(o.acl), Flags: int32(mode), TTL: o.ttl.Milliseconds()}
	}
	start := time.Now()
	sent, raw := begin(ctx, c, op, req)
	listing := c.beginListing(ctx, raw, list)
	var resp jute.Create2Response
	var made created
	if raw == nil {
		if _, raw = sent.wait(ctx, &resp); raw == nil {
			made.stat = statOf(&resp.Stat)
			made.czxid = made.stat.Czxid
		}
	}
	err := c.settle(request{"create", path, true}, start, raw)
	made.path = c.rel(resp.Path)
	return made, c.endListing(ctx, listing, list, start, made.path, err), err
}

// createAlong is create with o.ops: one multi, the create first.
func (c *Client) createAlong(ctx context.Context, path string, data []byte, mode CreateMode, o createOpts, list string) (created, *Listing, error) {
	ops := o.along(path, data, mode)
	req, err := c.multiRequest(ops)
	if err != nil {
		return created{}, nil, err
	}
	start := time.Now()
	sent, raw := begin(ctx, c, jute.OpMulti, req)
	listing := c.beginListing(ctx, raw, list)
	var (
		resp jute.MultiResponse
		rs   []OpResult
		zxid int64
	)
	if raw == nil {
		if zxid, raw = sent.wait(ctx, &resp); raw == nil {
			rs, raw = multiResults(resp.Results)
		}
	}
	results, err := c.multiOutcome(ops, rs, c.settle(request{"create", path, true}, start, raw))
	var made created
	if err == nil {
		made = created{path: results[0].Path, czxid: zxid}
	}
	return made, c.endListing(ctx, listing, list, start, made.path, err), err
}

// beginListing writes the listing of list right behind a create that was
// written (raw nil), when list is set.
func (c *Client) beginListing(ctx context.Context, raw error, list string) *pending {
	if raw != nil || list == "" {
		return nil
	}
	listing, _ := begin(ctx, c, jute.OpGetChildren2, &jute.GetChildren2Request{Path: c.abs(list)})
	return listing
}

// endListing reads the reply to listing, written behind the create of p
// (which ended with err): the listing, or nil when there is none or it does
// not show p.
func (c *Client) endListing(ctx context.Context, listing *pending, list string, start time.Time, p string, err error) *Listing {
	if listing == nil {
		return nil
	}
	var lr jute.GetChildren2Response
	_, lerr := listing.wait(ctx, &lr)
	if c.settle(request{"children", list, false}, start, lerr) != nil || err != nil {
		return nil
	}
	l := &Listing{lr.Children, statOf(&lr.Stat)}
	if _, name := SplitPath(p); !slices.Contains(l.Children, name) {
		return nil
	}
	return l
}

// CreateListed is Create that also lists the new node's parent in the same
// round trip: the listing shows the new node and every node created before
// it, so a recipe that counts or orders a directory's nodes learns where
// its own stands without a second round trip.
//
// listing is nil when there is none: the create failed, the listing
// failed, or it does not show the new node (it went out on another
// connection than the create, or someone deleted the node at once). List
// the parent then.
func (c *Client) CreateListed(ctx context.Context, path string, data []byte, mode CreateMode, opts ...CreateOption) (created string, listing *Listing, err error) {
	o, err := c.createOptions(path, data, mode, opts)
	if err != nil {
		return "", nil, err
	}
	parent, _ := SplitPath(path)
	made, l, err := c.create(ctx, path, data, mode, o, parent)
	return made.path, l, err
}
