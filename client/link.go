package client

import (
	"encoding/binary"
	"time"
)

// link is one connection's gate for calls.
//
// A new connection is usable at once, unless the wire client holds watches:
// then it re-sets them first (a SetWatches request carrying the last zxid
// it saw), and calls wait until that request has been written. go-zookeeper
// reads that zxid while its receive loop, already running, may write it for
// the reply to a call sent in the meantime: a data race (go-zookeeper/zk
// PR 35, unreleased). Calls sent after the SetWatches request are answered
// after it, in order, and do not race. The wait costs nothing measurable:
// the request goes out as soon as the session is established. A call that
// sat in go-zookeeper's send queue when the old connection broke still goes
// out first, and can still race: that window is the few microseconds
// between the break and the client learning of it.
type link struct {
	usable chan struct{} // closed once calls may be sent
	lost   chan struct{} // closed once the connection is lost and the wire client settled its calls
}

// resetWatchesWait bounds the wait for the SetWatches request, should the
// wire client not send one after all.
const resetWatchesWait = time.Second

// opSetWatches is the SetWatches opcode.
const opSetWatches = 101

// newLink makes the gate of a connection that just got its session.
func (c *Client) newLink() *link {
	l := &link{usable: make(chan struct{}), lost: make(chan struct{})}
	if c.watches.Load() == 0 {
		close(l.usable)
		return l
	}
	c.resetting.Store(l)
	time.AfterFunc(resetWatchesWait, func() { c.openLink(l) })
	return l
}

// openLink makes l usable, once.
func (c *Client) openLink(l *link) {
	if c.resetting.CompareAndSwap(l, nil) {
		close(l.usable)
	}
}

// sentFrame is called with every frame the wire client writes: the
// SetWatches request opens the connection's gate.
func (c *Client) sentFrame(p []byte) {
	if len(p) >= 12 && int32(binary.BigEndian.Uint32(p[8:12])) == opSetWatches {
		if l := c.resetting.Load(); l != nil {
			c.openLink(l)
		}
	}
}
