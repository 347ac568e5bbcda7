package client

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Watches re-set on a new connection.
//
// The server keeps a session's watches per connection, so on each new
// connection the wire client sends SetWatches with every watch it still
// holds and the last zxid it saw; the server then fires at once the
// watches whose node changed after that zxid. ZooKeeper's own client sends
// SetWatches before any other request on the new connection. go-zookeeper
// 1.0.4 does not: it takes its list of watches while its send loop already
// runs, so a watch set by a request on the new connection can join the
// list. The server then compares that node with the zxid the last
// connection ended at, and a node created or written since fires at once:
// a NodeDataChanged nobody caused. A lock waiter takes that for the
// release of the node ahead of it; a lease for a write to its own node.
//
// The connection wrapper restores ZooKeeper's order. It keeps a copy of the
// wire client's watch table (watchTable), updated from the frames that pass
// through it by the rules the wire client itself follows. When a new
// connection starts with watches in the table, every request is held back
// (buffered, the wire client is not blocked) until the SetWatches that
// carries them has been written; SetWatches keeps only the watches that
// were in the table when the connection started. Those are exactly the
// watches ZooKeeper's client would send.

// watchKind is the kind of a wire watch, as the wire client files it.
type watchKind uint8

const (
	kindData watchKind = iota
	kindExist
	kindChild
)

type watchKey struct {
	path string
	kind watchKind
}

// watchTable is the wire client's table of watches, as seen on the wire.
type watchTable struct {
	mu   sync.Mutex
	keys map[watchKey]struct{}
}

// snapshot returns the table's watches.
func (t *watchTable) snapshot() map[watchKey]struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := make(map[watchKey]struct{}, len(t.keys))
	for k := range t.keys {
		s[k] = struct{}{}
	}
	return s
}

// clear empties the table: the session expired, and the wire client drops
// every watch.
func (t *watchTable) clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.keys)
}

// set records a watch the server confirmed.
func (t *watchTable) set(k watchKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keys == nil {
		t.keys = make(map[watchKey]struct{})
	}
	t.keys[k] = struct{}{}
}

// fired removes the watches an event of type typ on path triggers.
func (t *watchTable) fired(typ int32, path string) {
	var kinds []watchKind
	switch EventType(typ) {
	case EventNodeCreated:
		kinds = []watchKind{kindExist}
	case EventNodeDataChanged:
		kinds = []watchKind{kindExist, kindData}
	case EventNodeChildrenChanged:
		kinds = []watchKind{kindChild}
	case EventNodeDeleted:
		kinds = []watchKind{kindExist, kindData, kindChild}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range kinds {
		delete(t.keys, watchKey{path, k})
	}
}

// rewatch is one connection's part: the watching requests awaiting their
// reply, the watches the connection started with, and the requests held
// back until SetWatches has carried those.
type rewatch struct {
	table *watchTable

	mu      sync.Mutex
	pending map[int32]watchRequest // by xid
	start   map[watchKey]struct{}  // the table when the connection started
	carried int                    // how many of start SetWatches has carried
	held    [][]byte               // requests written while holding
	holding bool
	valve   *time.Timer

	wmu   sync.Mutex // serialises writes to the connection
	write func([]byte) error
}

type watchRequest struct {
	op   int32
	path string
}

// holdLimit bounds how long requests wait for SetWatches: the wire client
// sends it at once, so this only matters if the table and the wire client
// ever disagreed.
const holdLimit = 2 * time.Second

// started is called with the connect response: with the watches the
// table holds then, requests wait for SetWatches.
func (r *rewatch) started(established bool) {
	if !established {
		r.table.clear() // the session expired: the wire client drops its watches
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start = r.table.snapshot()
	if len(r.start) > 0 {
		r.holding = true
		r.valve = time.AfterFunc(holdLimit, func() { _ = r.release() })
	}
}

// request handles a request frame p (length prefix included) on its way
// out, and reports whether it was held back.
func (r *rewatch) request(p []byte) (held bool) {
	if len(p) < 12 {
		return false
	}
	// Every request passes here: the header is read in place, and only a
	// reading request's body is decoded.
	xid, op := int32(binary.BigEndian.Uint32(p[4:])), int32(binary.BigEndian.Uint32(p[8:]))
	r.mu.Lock()
	defer r.mu.Unlock()
	switch op {
	case jute.OpExists, jute.OpGetData, jute.OpGetChildren, jute.OpGetChildren2:
		// Each of these starts with path, then the watch flag.
		var req jute.GetDataRequest
		if jute.Decode(p[12:], &req) == nil && req.Watch {
			if r.pending == nil {
				r.pending = make(map[int32]watchRequest)
			}
			r.pending[xid] = watchRequest{op, req.Path}
		}
	case jute.OpAuth, jute.OpPing:
		return false
	}
	return r.holdLocked(p)
}

// hold holds back a request frame p that sets no watch (a direct call's)
// while SetWatches is due, and reports whether it did.
func (r *rewatch) hold(p []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.holdLocked(p)
}

func (r *rewatch) holdLocked(p []byte) bool {
	if !r.holding {
		return false
	}
	r.held = append(r.held, append([]byte(nil), p...))
	return true
}

// setWatches returns the SetWatches frame p to write in its place: with
// relativeZxid set to zxid and only the watches the connection started
// with. The caller writes it, then calls carriedSome.
func (r *rewatch) setWatches(p []byte, zxid int64) (q []byte, carried int) {
	var sw jute.SetWatches
	if len(p) < 12 || jute.Decode(p[12:], &sw) != nil {
		return p, 0
	}
	r.mu.Lock()
	keep := func(paths []string, kind watchKind) []string {
		out := paths[:0:0]
		for _, path := range paths {
			if _, ok := r.start[watchKey{path, kind}]; ok {
				out = append(out, path)
			}
		}
		carried += len(out)
		return out
	}
	sw.DataWatches = keep(sw.DataWatches, kindData)
	sw.ExistWatches = keep(sw.ExistWatches, kindExist)
	sw.ChildWatches = keep(sw.ChildWatches, kindChild)
	r.mu.Unlock()
	sw.RelativeZxid = zxid
	var h jute.RequestHeader
	_ = jute.Decode(p[4:], &h)
	return jute.Frame(&h, &sw), carried
}

// carriedSome notes that SetWatches carried n of the starting watches;
// once all are carried, the held requests go out.
func (r *rewatch) carriedSome(n int) error {
	r.mu.Lock()
	r.carried += n
	done := r.holding && r.carried >= len(r.start)
	r.mu.Unlock()
	if !done {
		return nil
	}
	return r.release()
}

// release writes the held requests and stops holding.
func (r *rewatch) release() error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.mu.Lock()
	held := r.held
	r.held, r.holding = nil, false
	if r.valve != nil {
		r.valve.Stop()
	}
	r.mu.Unlock()
	for _, p := range held {
		if err := r.write(p); err != nil {
			return err
		}
	}
	return nil
}

// reply handles a frame from the server (length prefix excluded): a reply
// to a watching request, or a watch event, changes the table as it changes
// the wire client's.
func (r *rewatch) reply(b []byte) {
	if len(b) < 16 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(b))
	if xid == -1 {
		var ev jute.WatcherEvent
		if jute.Decode(b[16:], &ev) == nil {
			r.table.fired(ev.Type, ev.Path)
		}
		return
	}
	r.mu.Lock()
	req, ok := r.pending[xid]
	delete(r.pending, xid)
	r.mu.Unlock()
	if !ok {
		return
	}
	code := int32(binary.BigEndian.Uint32(b[12:]))
	switch {
	case code == 0 && (req.op == jute.OpGetChildren || req.op == jute.OpGetChildren2):
		r.table.set(watchKey{req.path, kindChild})
	case code == 0:
		r.table.set(watchKey{req.path, kindData})
	case req.op == jute.OpExists && code == int32(jute.ErrNoNode):
		r.table.set(watchKey{req.path, kindExist})
	}
}
