package cache

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/jute"
)

// engine keeps the cache's image of the tree from one connection's
// frames. Its goroutine reads every frame, applies it and queues the reads
// it calls for; it never waits for anything but the socket.
//
// Why the image is exact at a zxid: the server processes a session's
// requests in order and sends a watch event down the connection before
// the reply to any read processed after the change it reports, so replies
// and events arrive as one stream in the order of the server's
// transactions. Every event makes the engine read the node again; a read
// reply carries the node as it was when the server answered, and its
// header the zxid the server had applied then. Once every read asked for
// has been answered, each node was read after its last change up to that
// zxid (or its event would have asked for a read still unanswered), and
// each node created since was announced (by the persistent watch, or by
// its parent's child watch, armed by the read that listed the children):
// the image is the server's tree at the last reply's zxid. That is the
// only moment a snapshot is published.
type engine struct {
	c       *Cache
	w       *wire
	oneShot bool // one-shot watches set by the reads; else one persistent recursive watch

	mu        sync.Mutex
	nodes     map[string]*wnode // server paths
	pending   map[int32]request
	syncing   bool // a sync is pending
	resync    bool // a sync was asked for while one was pending: send another after it
	dirty     map[string]struct{}
	published bool // the first snapshot of this connection is out
	count     int
	bytes     int64
	lastZxid  int64 // the highest zxid of a reply
}

// wnode is one node of the image: the Node the next snapshot hands out
// for it (shared with the snapshots, so never modified: a change makes a
// new one) and the names of its children (nil until it has one).
type wnode struct {
	node *Node
	kids map[string]struct{}
}

type request struct {
	op   int32
	path string
	list bool // a getData after which the node's children are read, if it has any
}

// errFallback reports that the server refused addWatch: the cache goes on
// with one-shot watches on its next connection.
var errFallback = errors.New("server refused addWatch: persistent watches need ZooKeeper 3.6")

func newEngine(c *Cache, w *wire, oneShot bool) *engine {
	return &engine{c: c, w: w, oneShot: oneShot, nodes: map[string]*wnode{}, pending: map[int32]request{},
		dirty: map[string]struct{}{}}
}

// start arms the watch and reads the whole tree. A cache of the root
// alone (depth 0) arms a persistent watch on it, not a recursive one: the
// server then tells it of the root's own changes (its children's comings
// and goings as NodeChildrenChanged) and of nothing below.
func (e *engine) start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.oneShot {
		mode := jute.AddWatchPersistentRecursive
		if e.c.cfg.depth == 0 {
			mode = jute.AddWatchPersistent
		}
		e.send(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.c.root, Mode: mode}, e.c.root)
	}
	e.reconcile(e.c.root)
}

func (e *engine) send(op int32, req any, path string) {
	e.sendAs(request{op: op, path: path}, req)
}

// sendAs sends req and keeps r as what its reply answers.
func (e *engine) sendAs(r request, req any) {
	e.pending[e.w.send(r.op, req)] = r
}

// reconcile reads path again (its data, and its children unless it lies at
// the depth limit), arming one-shot watches in that mode.
//
// Under the persistent watch the children are read only once the data's
// Stat says there are some: the watch was armed before the read, so a
// child created after it is announced by an event, and a tree of mostly
// leaves loads with about one request a node instead of two. One-shot
// mode lists every node's children at once, since the listing is what
// arms the child watch (at the depth limit too: the children's changes
// change the node's Stat).
func (e *engine) reconcile(path string) {
	if e.oneShot {
		e.send(jute.OpGetData, &jute.GetDataRequest{Path: path, Watch: true}, path)
		e.send(jute.OpGetChildren2, &jute.GetChildren2Request{Path: path, Watch: true}, path)
		return
	}
	e.sendAs(request{op: jute.OpGetData, path: path, list: e.c.depth(path) < e.c.cfg.depth},
		&jute.GetDataRequest{Path: path})
}

// sync asks the server for a sync, after which every reply carries a zxid
// at least the one the leader had when it was asked. While one is pending
// it asks for the next once that one is answered: the pending one may have
// been processed before the write the caller waits for.
func (e *engine) sync() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.syncing {
		e.resync = true
		return
	}
	e.syncing = true
	e.send(jute.OpSync, &jute.SyncRequest{Path: "/"}, "/")
}

// frame applies one frame from the server.
func (e *engine) frame(b []byte) error {
	var h jute.ReplyHeader
	d := jute.NewDecoder(b, e.w.maxLen)
	if err := jute.Unmarshal(d, &h); err != nil {
		return err
	}
	body := d.Rest()
	e.mu.Lock()
	defer e.mu.Unlock()
	switch h.Xid {
	case jute.XidNotification:
		var ev jute.WatcherEvent
		if err := jute.Decode(body, &ev); err != nil {
			return err
		}
		e.event(ev)
		return nil
	case jute.XidAuth:
		if h.Err != 0 {
			return &fatalError{fmt.Errorf("authentication: %w", jute.Error(h.Err))}
		}
		return nil
	case jute.XidPing:
	default:
		r, ok := e.pending[h.Xid]
		if !ok {
			return fmt.Errorf("reply to unknown xid %d", h.Xid)
		}
		delete(e.pending, h.Xid)
		if err := e.reply(r, h, body); err != nil {
			return err
		}
	}
	e.lastZxid = max(e.lastZxid, h.Zxid)
	e.w.sess.lastZxid = max(e.w.sess.lastZxid, h.Zxid)
	if len(e.pending) == 0 {
		return e.publish()
	}
	return nil
}

// readFailed returns the error that ends the connection when a frame could
// not be read: for a reply too large to read, a *LimitError that stops the
// cache, since every connection would read the same node and fail alike.
func (e *engine) readFailed(err error) error {
	var big *frameTooLarge
	if !errors.As(err, &big) {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.pending[big.xid]
	if !ok {
		return err
	}
	return &fatalError{&LimitError{Path: e.c.path, Nodes: e.count, Bytes: e.bytes, MaxNodes: e.c.cfg.maxNodes,
		MaxBytes: e.c.cfg.maxBytes, Unreadable: e.c.rel(r.path), Reply: big.size, MaxReply: big.max}}
}

// event handles a watch event: it reads what changed again.
func (e *engine) event(ev jute.WatcherEvent) {
	p := ev.Path
	if ev.Type == jute.EventNone || !e.c.under(p) {
		return
	}
	in := e.c.depth(p) <= e.c.cfg.depth
	switch ev.Type {
	case jute.EventNodeCreated:
		if in {
			e.reconcile(p)
		}
		e.refreshParent(p)
	case jute.EventNodeDeleted:
		if e.oneShot {
			if in {
				e.reconcile(p) // and re-arm, if the node is back
			}
			return
		}
		if in {
			e.remove(p)
		}
		e.refreshParent(p)
	case jute.EventNodeDataChanged:
		if in {
			e.send(jute.OpGetData, &jute.GetDataRequest{Path: p, Watch: e.oneShot}, p)
		}
	case jute.EventNodeChildrenChanged:
		switch {
		case !in:
		case e.oneShot:
			e.send(jute.OpGetChildren2, &jute.GetChildren2Request{Path: p, Watch: true}, p)
		default:
			// The root of a cache of depth 0 (only its watch is not
			// recursive): its Stat changed, and its children are not held.
			e.send(jute.OpGetData, &jute.GetDataRequest{Path: p}, p)
		}
	}
}

// refreshParent reads the parent of a node created or deleted under a
// persistent watch, whose Stat (numChildren, cversion, pzxid) changed
// without an event of its own. One-shot child watches report it.
func (e *engine) refreshParent(p string) {
	if e.oneShot || p == e.c.root {
		return
	}
	parent := parentOf(p)
	if e.c.depth(parent) <= e.c.cfg.depth {
		e.send(jute.OpGetData, &jute.GetDataRequest{Path: parent}, parent)
	}
}

// reply applies the answer to one read.
func (e *engine) reply(r request, h jute.ReplyHeader, body []byte) error {
	code := jute.Error(h.Err)
	switch {
	case r.op == jute.OpAddWatch && code == jute.ErrUnimplemented:
		return errFallback
	case reconnectCures(code):
		// Not fatal: the cache reconnects, and resumes its session or
		// learns that it expired.
		return fmt.Errorf("%s %s: %w", jute.OpName(r.op), r.path, code)
	case r.op == jute.OpSync:
		e.syncing = false
		if e.resync {
			e.resync = false
			e.syncing = true
			e.send(jute.OpSync, &jute.SyncRequest{Path: "/"}, "/")
		}
		return nil
	case r.op == jute.OpExists:
		if code == jute.ErrOK {
			e.reconcile(r.path)
		}
		return nil
	case code == jute.ErrNoNode && (r.op == jute.OpGetData || r.op == jute.OpGetChildren2):
		if r.op == jute.OpGetData {
			e.remove(r.path)
			if r.path == e.c.root && e.oneShot {
				e.send(jute.OpExists, &jute.ExistsRequest{Path: r.path, Watch: true}, r.path)
			}
		}
		return nil
	case code == jute.ErrNoAuth:
		return &fatalError{fmt.Errorf("%s %s: %w", jute.OpName(r.op), r.path, client.ErrNoAuth)}
	case code != jute.ErrOK:
		return &fatalError{fmt.Errorf("%s %s: %w", jute.OpName(r.op), r.path, code)}
	}
	switch r.op {
	case jute.OpGetData:
		var rsp jute.GetDataResponse
		if err := jute.Decode(body, &rsp); err != nil {
			return err
		}
		// A node new to the image is listed whatever read brought it in:
		// an event's read of a parent (refreshParent) can come back
		// before the listing that would have found the parent, which then
		// takes it for known.
		list := r.list || (!e.oneShot && e.nodes[r.path] == nil && e.c.depth(r.path) < e.c.cfg.depth)
		if err := e.upsert(r.path, rsp.Data, rsp.Stat); err != nil || !list || e.nodes[r.path] == nil {
			return err
		}
		if rsp.Stat.NumChildren > 0 {
			e.send(jute.OpGetChildren2, &jute.GetChildren2Request{Path: r.path}, r.path)
		} else {
			e.children(r.path, nil, rsp.Stat) // forget the children held before, if any
		}
	case jute.OpGetChildren2:
		var rsp jute.GetChildren2Response
		if err := jute.Decode(body, &rsp); err != nil {
			return err
		}
		e.children(r.path, rsp.Children, rsp.Stat)
	}
	return nil
}

// reconnectCures reports whether an error reply is about the session or
// the connection rather than the request: ZooKeeper answers so a request
// of a session that expired, moved to another connection or is not known
// (any longer), or one it shed under load.
func reconnectCures(code jute.Error) bool {
	switch code {
	case jute.ErrSessionExpired, jute.ErrSessionMoved, jute.ErrUnknownSession, jute.ErrConnectionLoss,
		jute.ErrOperationTimeout, jute.ErrRequestTimeout, jute.ErrThrottledOp:
		return true
	}
	return false
}

// upsert stores what a getData returned. A node whose parent is not held
// waits for the parent's children to be read.
func (e *engine) upsert(p string, data []byte, st jute.Stat) error {
	var parent *wnode
	if p != e.c.root {
		if parent = e.nodes[parentOf(p)]; parent == nil {
			return nil
		}
	}
	n := e.nodes[p]
	if n == nil {
		n = &wnode{node: &Node{}}
		e.nodes[p] = n
		e.count++
		e.bytes += int64(len(p))
		if parent != nil {
			if parent.kids == nil {
				parent.kids = map[string]struct{}{}
			}
			parent.kids[nameOf(p)] = struct{}{}
			e.dirty[parentOf(p)] = struct{}{}
		}
	}
	e.bytes += int64(len(data) - len(n.node.Data))
	n.node = &Node{Path: e.c.rel(p), Data: data, Stat: stat(st), Children: n.node.Children}
	e.dirty[p] = struct{}{}
	if e.count > e.c.cfg.maxNodes || e.bytes > e.c.cfg.maxBytes {
		return &fatalError{&LimitError{Path: e.c.path, Nodes: e.count, Bytes: e.bytes,
			MaxNodes: e.c.cfg.maxNodes, MaxBytes: e.c.cfg.maxBytes}}
	}
	return nil
}

// children applies what a getChildren2 returned: the node's Stat, and
// the children to read or forget.
func (e *engine) children(p string, names []string, st jute.Stat) {
	n := e.nodes[p]
	if n == nil {
		return // its getData found nothing; an event follows if it is back
	}
	nd := *n.node
	nd.Stat = stat(st)
	n.node = &nd
	e.dirty[p] = struct{}{}
	if e.c.depth(p) >= e.c.cfg.depth {
		return
	}
	listed := make(map[string]struct{}, len(names))
	for _, name := range names {
		listed[name] = struct{}{}
		if _, ok := n.kids[name]; !ok {
			e.reconcile(joinPath(p, name))
		}
	}
	for name := range n.kids {
		if _, ok := listed[name]; !ok {
			e.remove(joinPath(p, name))
		}
	}
}

// remove forgets a node and its subtree.
func (e *engine) remove(p string) {
	n := e.nodes[p]
	if n == nil {
		return
	}
	for name := range n.kids {
		e.remove(joinPath(p, name))
	}
	delete(e.nodes, p)
	e.count--
	e.bytes -= int64(len(p) + len(n.node.Data))
	e.dirty[p] = struct{}{}
	if p != e.c.root {
		if parent := e.nodes[parentOf(p)]; parent != nil {
			delete(parent.kids, nameOf(p))
			e.dirty[parentOf(p)] = struct{}{}
		}
	}
}

// publish hands out the image as the snapshot at the last reply's zxid;
// nothing is outstanding.
func (e *engine) publish() error {
	prev := e.c.current()
	zxid := e.lastZxid
	if prev != nil && e.published && len(e.dirty) == 0 && zxid <= prev.zxid {
		return nil
	}
	changes := layer{}
	var changed []string // nil: all
	if prev != nil && e.published {
		changed = make([]string, 0, len(e.dirty))
		for p := range e.dirty {
			rel := e.c.rel(p)
			changed = append(changed, rel)
			changes[rel] = nil
			if n := e.nodes[p]; n != nil {
				changes[rel] = e.node(n)
			}
		}
	} else {
		prev = nil // read anew: the layers start again
		for p, n := range e.nodes {
			changes[e.c.rel(p)] = e.node(n)
		}
	}
	first := !e.published
	if !e.c.publish(&Snapshot{zxid: zxid, root: e.c.path, layers: prev.next(changes), n: len(e.nodes)}, first, changed) {
		return nil
	}
	clear(e.dirty)
	e.published = true
	if first {
		if want := e.c.wanted(); want > zxid && !e.syncing {
			e.syncing = true
			e.send(jute.OpSync, &jute.SyncRequest{Path: "/"}, "/")
		}
	}
	return nil
}

// node is n's Node as the snapshot being taken has it: its children
// listed anew if they changed.
func (e *engine) node(n *wnode) *Node {
	if len(n.kids) != len(n.node.Children) || !kidsListed(n) {
		nd := *n.node
		nd.Children = nil
		if len(n.kids) > 0 {
			nd.Children = slices.Sorted(maps.Keys(n.kids))
		}
		n.node = &nd
	}
	return n.node
}

// kidsListed reports whether n's Node lists exactly its children.
func kidsListed(n *wnode) bool {
	for _, name := range n.node.Children {
		if _, ok := n.kids[name]; !ok {
			return false
		}
	}
	return true
}

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func nameOf(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

func joinPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}
