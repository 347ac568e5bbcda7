package client

import (
	"context"
	"fmt"
)

// LastZxid is the highest zxid of any reply this client has received:
// the zxid of a write's own transaction, and for a read the zxid of the
// state it read, as ZooKeeper's Java client keeps it. Every call counts,
// creates, deletes, multis and syncs included. Pass it to another client's
// CatchUp (or to a cache's WaitFor) to have it read everything this client
// has written or read.
func (c *Client) LastZxid() int64 { return c.lastZxid.Load() }

// CatchUp makes the reads that follow it see every write up to zxid, a zxid
// obtained elsewhere (for example another process's LastZxid). When this
// client has already seen zxid it returns at once; otherwise it syncs the
// connected server with the leader. Read-your-writes across clients:
// process A writes and passes A.LastZxid() to B; B calls CatchUp and reads.
func (c *Client) CatchUp(ctx context.Context, zxid int64) error {
	if c.life.Err() != nil {
		return fmt.Errorf("%s: %w", named("catchUp", ""), ErrClosed)
	}
	if c.LastZxid() >= zxid {
		return nil
	}
	return c.Sync(ctx, "/")
}
