package client

import "context"

// LastZxid is the highest zxid this client has seen in any Stat it received
// (creation, modification and child-change zxids alike).
func (c *Client) LastZxid() int64 { return c.lastZxid.Load() }

func (c *Client) observe(st *Stat) {
	if st == nil {
		return
	}
	z := max(st.Czxid, st.Mzxid, st.Pzxid)
	for {
		cur := c.lastZxid.Load()
		if z <= cur || c.lastZxid.CompareAndSwap(cur, z) {
			return
		}
	}
}

// CatchUp makes the reads that follow it see every write up to zxid, a zxid
// obtained elsewhere (for example another process's LastZxid). When this
// client has already seen zxid it returns at once; otherwise it syncs the
// connected server with the leader. Read-your-writes across clients:
// process A writes and passes A.LastZxid() to B; B calls CatchUp and reads.
func (c *Client) CatchUp(ctx context.Context, zxid int64) error {
	if c.LastZxid() >= zxid {
		return nil
	}
	return c.Sync(ctx, "/")
}
