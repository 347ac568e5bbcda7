package client

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// createZxids lets a create learn its node's czxid from its reply, without
// reading the node: a reply carries the zxid of the transaction it answers
// (a write's own: ZooKeeper applies writes one at a time and answers each
// right after applying it), and for a create that is the new node's czxid.
// The wire client keeps that zxid to itself, so the connection wrapper
// (sniffConn) notes the xid of each create asked for by path, and the zxid
// of its reply.
type createZxids struct {
	wanted atomic.Int64 // entries in paths: none, and sniffConn looks no further
	paths  sync.Map     // the server's path of a create asked for → *createSlot

	mu    sync.Mutex
	byXid map[int32]*createSlot // creates sent, until their reply
}

// createSlot is what sniffConn learns of one create: when it was first
// written, and the zxid of its reply.
type createSlot struct {
	zxid    atomic.Int64
	written chan struct{} // closed when the create is first written
	once    sync.Once
}

// want asks for the czxid of the next create of path (the server's path).
// It returns nil when a create of path is watched for already: two creates
// of one path cannot be told apart on the wire.
func (z *createZxids) want(path string) *createSlot {
	slot := &createSlot{written: make(chan struct{})}
	if _, taken := z.paths.LoadOrStore(path, slot); taken {
		return nil
	}
	z.wanted.Add(1)
	return slot
}

// done forgets path.
func (z *createZxids) done(path string, slot *createSlot) {
	if slot == nil {
		return
	}
	if z.paths.CompareAndDelete(path, slot) {
		z.wanted.Add(-1)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	for xid, s := range z.byXid {
		if s == slot {
			delete(z.byXid, xid)
		}
	}
}

// sent sees a request frame (length, xid, opcode, then for a create its
// path) on its way out.
func (z *createZxids) sent(p []byte) {
	if z.wanted.Load() == 0 || len(p) < 16 {
		return
	}
	switch binary.BigEndian.Uint32(p[8:12]) {
	case 1, 15, 19, 21: // create, create2, createContainer, createTTL
	default:
		return
	}
	n := int(int32(binary.BigEndian.Uint32(p[12:16])))
	if n < 0 || 16+n > len(p) {
		return
	}
	slot, ok := z.paths.Load(string(p[16 : 16+n]))
	if !ok {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.byXid == nil {
		z.byXid = map[int32]*createSlot{}
	}
	cs := slot.(*createSlot)
	z.byXid[int32(binary.BigEndian.Uint32(p[4:8]))] = cs
	// The wire client writes this frame before it takes the next request:
	// a request queued from now on reaches the server after the create.
	cs.once.Do(func() { close(cs.written) })
}

// replied sees a reply header (xid, zxid, err) on its way in.
func (z *createZxids) replied(xid int32, zxid int64, code int32) {
	if z.wanted.Load() == 0 {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if slot, ok := z.byXid[xid]; ok {
		delete(z.byXid, xid)
		if code == 0 {
			slot.zxid.Store(zxid)
		}
	}
}
