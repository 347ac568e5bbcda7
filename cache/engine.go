package cache

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zkit-dev/zkit/client"
)

// engine keeps the cache's image of the tree through one load: it reads
// the tree, applies the events and the answers to its reads, and reads
// again what an event names. It runs on the cache's goroutine alone.
//
// Why the image is exact at a zxid: the server sends a watch event before
// the reply to any read it processes after the change it reports, and the
// client puts it in the feed (or the watch's channel) before that reply
// reaches its caller. Every event makes the engine read the node again
// (after any read of it still under way: reads of one path go in order);
// a read's answer is the node as it was when the server answered. When
// every read has been answered, the engine takes the client's LastZxid,
// Z, then everything the feed holds: every event of a change up to Z is
// there. Should none call for a read, each node was read after its last
// change up to Z (or that change's event would have asked for a read still
// unanswered), and each node created since was announced (by the
// persistent watch, or by its parent's child watch, set by the read that
// listed the children): the image is the server's tree at Z. That is the
// only moment a snapshot is published.
//
// Answers of different paths may be applied in another order than the
// server's: a listing of a node's children may come after the creation of
// a child that it does not show. Such a listing does not remove a child
// created after it (a czxid above the listing's pzxid); and a node whose
// Stat counts other children than the image holds is listed again.
type engine struct {
	c       *Cache
	q       *reads
	oneShot *armed // one-shot mode: the session's watches; nil with a persistent watch

	image     trie                           // the nodes held, by key; shared with the snapshots
	kids      map[string]map[string]struct{} // by key: the children of the nodes whose children changed since the last snapshot
	created   map[string]int64               // by path: the Czxid of the last node the image did not show, since the last snapshot (deletions.go)
	dirty     map[string]struct{}            // the paths changed since the last snapshot, once the first is out
	published bool                           // the first snapshot of this load is out
	bytes     int64
}

// errFallback reports that the server refused addWatch: the cache goes on
// with one-shot watches.
var errFallback = errors.New("server refused addWatch: persistent watches need ZooKeeper 3.6")

func newEngine(c *Cache, q *reads, oneShot *armed) *engine {
	return &engine{c: c, q: q, oneShot: oneShot}
}

// start reads the whole tree.
func (e *engine) start() { e.reconcile(e.c.path) }

// reconcile reads path again (its data, and its children unless it lies
// at the depth limit), setting its one-shot watches in that mode.
//
// Under the persistent watch the children are read only once the data's
// Stat says there are some: the watch was set before the read, so a child
// created after it is announced by an event, and a tree of mostly leaves
// loads with about one request a node instead of two. One-shot mode lists
// every node's children at once, since the listing is what sets the child
// watch (at the depth limit too: the children's changes change the node's
// Stat).
func (e *engine) reconcile(path string) {
	if e.oneShot != nil {
		e.q.send(request{op: readData, path: path})
		e.q.send(request{op: readChildren, path: path})
		return
	}
	e.q.send(request{op: readData, path: path, list: e.c.depth(path) < e.c.cfg.depth})
}

// event handles a watch event: it reads what changed again, and notes
// when nodes were created and deleted where the server says it. An event
// that says the watch ended returns why.
func (e *engine) event(ev client.WatchEvent) error {
	p := ev.Path
	if ev.Type == client.EventNotWatching {
		return fmt.Errorf("a one-shot watch ended: %w", ev.Err)
	}
	if !e.c.under(p) {
		return nil
	}
	in := e.c.depth(p) <= e.c.cfg.depth
	switch ev.Type {
	case client.EventNodeCreated:
		if in {
			if ev.Zxid > 0 {
				e.known(p, ev.Zxid)
			}
			e.reconcile(p)
		}
		e.refreshParent(p)
	case client.EventNodeDeleted:
		if e.oneShot != nil {
			if in {
				e.deletedAt(p, ev.Zxid)
				e.reconcile(p) // and set the watches again, if the node is back
			}
			return nil
		}
		if in {
			if e.q.busyWith(p) || p == e.c.path {
				// An answer under way may still show it: read again after.
				// The root is read again in any case: it has no parent
				// to read again (refreshParent), and a snapshot is taken
				// at the zxid of the last reply, which without one would
				// be older than the delete.
				e.q.send(request{op: readData, path: p})
			}
			e.remove(p)
			e.deletedAt(p, ev.Zxid)
		}
		e.refreshParent(p)
	case client.EventNodeDataChanged:
		if in {
			e.q.send(request{op: readData, path: p})
		}
	case client.EventNodeChildrenChanged:
		switch {
		case !in:
		case e.oneShot != nil:
			e.q.send(request{op: readChildren, path: p})
		default:
			// The root of a cache of depth 0 (only its watch is not
			// recursive): its Stat changed, and its children are not held.
			e.q.send(request{op: readData, path: p})
		}
	}
	return nil
}

// deletedAt notes, for the events, that the node at p was deleted at zxid
// (0: the server did not say). The node deleted is the latest the engine
// knows of that was created before zxid: the one its image holds, or the
// last one it did not (created, see deletions.go).
func (e *engine) deletedAt(p string, zxid int64) {
	czxid := e.created[p]
	delete(e.created, p)
	if czxid >= zxid {
		czxid = 0
	}
	if n := e.image.get(e.c.key(p)); n != nil && n.stat.czxid < zxid {
		czxid = max(czxid, n.stat.czxid)
	}
	if czxid > 0 {
		e.c.deleted(p, czxid, zxid)
	}
}

// known notes that the node at p created at czxid may be gone from the
// image, or not in it yet, when the event of its delete comes: an event
// said it was created, or the image let it go (a read found it gone, or a
// listing did not show it, before the engine took the delete's event).
func (e *engine) known(p string, czxid int64) {
	if e.created == nil {
		e.created = map[string]int64{}
	}
	e.created[p] = max(e.created[p], czxid)
}

// refreshParent reads the parent of a node created or deleted under a
// persistent watch, whose Stat (numChildren, cversion, pzxid) changed
// without an event of its own. One-shot child watches report it.
func (e *engine) refreshParent(p string) {
	if e.oneShot != nil || p == e.c.path {
		return
	}
	parent := parentOf(p)
	if e.c.depth(parent) <= e.c.cfg.depth {
		e.q.send(request{op: readData, path: parent})
	}
}

// reply applies the answer to one read; it returns an error when the load
// cannot go on: a *fatalError, or an error trying again may cure.
func (e *engine) reply(res result) error {
	r := res.r
	e.oneShot.file(res)
	var big *client.ReplyTooLargeError
	switch err := res.err; {
	case r.op == readBatch && errors.As(err, &big):
		// Too much data for one reply: read them in halves.
		nodes := *r.batch
		e.q.load(nodes[:len(nodes)/2])
		e.q.load(nodes[len(nodes)/2:])
		return nil
	case r.op == readBatch && err == nil:
		for _, one := range res.batch {
			if err := e.reply(one); err != nil {
				return err
			}
		}
		return nil
	case err == nil:
	case errors.Is(err, client.ErrNoNode):
		if r.op == readData {
			e.remove(r.path)
			if r.path == e.c.path && e.oneShot != nil {
				e.q.send(request{op: readExists, path: r.path})
			}
		}
		return nil
	case errors.As(err, &big):
		return &fatalError{&LimitError{Path: e.c.path, Nodes: e.image.n, Bytes: e.bytes, MaxNodes: e.c.cfg.maxNodes,
			MaxBytes: e.c.cfg.maxBytes, Unreadable: r.path, Reply: big.Size, MaxReply: big.Limit}}
	case errors.Is(err, client.ErrNoAuth):
		return &fatalError{err}
	default:
		return err
	}
	switch r.op {
	case readExists:
		if res.exists {
			e.reconcile(r.path)
		}
	case readData:
		key := e.c.key(r.path)
		held := e.image.get(key) != nil
		if err := e.upsert(r.path, res.data, res.stat); err != nil {
			return err
		}
		n := e.image.get(key)
		if n == nil {
			return nil
		}
		if e.oneShot != nil {
			// A node new to the image is listed, which sets its child
			// watch, whatever read brought it in (an event's read of a
			// node its parent's listing had not shown yet).
			if list := (request{op: readChildren, path: r.path}); !held && !e.q.pending(list) {
				e.q.send(list)
			}
			return nil
		}
		if e.c.depth(r.path) >= e.c.cfg.depth {
			return nil
		}
		// A node new to the image is listed whatever read brought it in
		// (an event's read of a parent can come back before the listing
		// that would have found the parent), and so is one whose Stat
		// counts other children than the image holds.
		if !r.list && held && e.numKids(n) == int(res.stat.NumChildren) {
			return nil
		}
		if res.stat.NumChildren > 0 {
			e.q.send(request{op: readChildren, path: r.path})
		} else {
			e.children(r.path, nil, res.stat) // forget the children held before, if any
		}
	case readChildren:
		e.children(r.path, res.children, res.stat)
	}
	return nil
}

// upsert stores what a read of p's data returned. A node whose parent is
// not held waits for the parent's children to be read.
func (e *engine) upsert(p string, data []byte, st *client.Stat) error {
	key := e.c.key(p)
	var parent *entry
	if key != "" {
		if parent = e.image.get(parentKey(key)); parent == nil {
			return nil
		}
	}
	n := &entry{data: data, stat: packStat(st)}
	if held := e.image.get(key); held != nil {
		n.key, n.kids = held.key, held.kids
		e.bytes -= int64(len(held.data))
	} else {
		n.key = strings.Clone(key) // not the whole path it is a part of
		e.bytes += int64(len(p))
		if parent != nil {
			e.kidsOf(parent)[nameOf(n.key)] = struct{}{}
			e.touch(parentOf(p))
		}
	}
	e.bytes += int64(len(data))
	e.image = e.image.with(n)
	e.touch(p)
	if e.image.n > e.c.cfg.maxNodes || e.bytes > e.c.cfg.maxBytes {
		return &fatalError{&LimitError{Path: e.c.path, Nodes: e.image.n, Bytes: e.bytes,
			MaxNodes: e.c.cfg.maxNodes, MaxBytes: e.c.cfg.maxBytes}}
	}
	return nil
}

// children applies what a listing of p returned: the node's Stat, and
// the children to read or forget. A held child created after the listing
// (its czxid above the listing's pzxid) stays.
func (e *engine) children(p string, names []string, st *client.Stat) {
	n := e.image.get(e.c.key(p))
	if n == nil {
		return // its read found nothing; an event follows if it is back
	}
	if s := packStat(st); s != n.stat {
		changed := *n
		changed.stat = s
		n = &changed
		e.image = e.image.with(n)
		e.touch(p)
	}
	if e.c.depth(p) >= e.c.cfg.depth {
		return
	}
	listed := make(map[string]struct{}, len(names))
	var fresh []string
	for _, name := range names {
		listed[name] = struct{}{}
		if !e.hasKid(n, name) {
			fresh = append(fresh, joinPath(p, name))
		}
	}
	if e.oneShot != nil {
		for _, kid := range fresh {
			e.reconcile(kid)
		}
	} else {
		e.q.load(fresh)
	}
	for _, name := range e.kidNames(n) {
		if _, ok := listed[name]; ok {
			continue
		}
		if kid := e.image.get(n.key + "/" + name); kid == nil || kid.stat.czxid <= st.Pzxid {
			e.remove(joinPath(p, name))
		}
	}
}

// remove forgets a node and its subtree.
func (e *engine) remove(p string) {
	key := e.c.key(p)
	n := e.image.get(key)
	if n == nil {
		return
	}
	e.drop(p, n)
	if key != "" {
		if parent := e.image.get(parentKey(key)); parent != nil {
			delete(e.kidsOf(parent), nameOf(key))
			e.touch(parentOf(p))
		}
	}
}

// drop forgets n, the node at p, and its subtree; its parent's children
// are the caller's to change.
func (e *engine) drop(p string, n *entry) {
	for _, name := range e.kidNames(n) {
		if kid := e.image.get(n.key + "/" + name); kid != nil {
			e.drop(joinPath(p, name), kid)
		}
	}
	delete(e.kids, n.key)
	e.known(p, n.stat.czxid)
	e.image = e.image.without(n.key)
	e.bytes -= int64(len(p) + len(n.data))
	e.touch(p)
}

// The children of a node are the sorted names in its entry, the ones the
// snapshots share, until they change: they are then a set the engine
// changes in place (kids), written into a new entry when the next snapshot
// is taken (settleKids).

// kidsOf returns the set of n's children's names, to change.
func (e *engine) kidsOf(n *entry) map[string]struct{} {
	set := e.kids[n.key]
	if set == nil {
		set = make(map[string]struct{}, len(n.children())+1)
		for _, name := range n.children() {
			set[name] = struct{}{}
		}
		if e.kids == nil {
			e.kids = map[string]map[string]struct{}{}
		}
		e.kids[n.key] = set
	}
	return set
}

// numKids is the number of n's children held.
func (e *engine) numKids(n *entry) int {
	if set, ok := e.kids[n.key]; ok {
		return len(set)
	}
	return len(n.children())
}

// hasKid reports whether n's child of that name is held.
func (e *engine) hasKid(n *entry, name string) bool {
	if set, ok := e.kids[n.key]; ok {
		_, held := set[name]
		return held
	}
	_, held := slices.BinarySearch(n.children(), name)
	return held
}

// kidNames returns the names of n's children held, in a slice that
// changing them does not change.
func (e *engine) kidNames(n *entry) []string {
	if set, ok := e.kids[n.key]; ok {
		return slices.Collect(maps.Keys(set))
	}
	return n.children()
}

// settleKids writes the children that changed into new entries of their
// parents, for the snapshot being taken.
func (e *engine) settleKids() {
	for key, set := range e.kids {
		n := e.image.get(key)
		if n == nil {
			continue // gone: drop let its set go already
		}
		changed := *n
		changed.kids = nil
		if len(set) > 0 {
			names := make([]string, 0, len(set)) // no room to spare: snapshots keep it
			for name := range set {
				names = append(names, name)
			}
			slices.Sort(names)
			changed.kids = &names
		}
		e.image = e.image.with(&changed)
	}
	e.kids = nil
}

// touch notes that the node at p changed since the last snapshot, for the
// events; before the first snapshot every node is new.
func (e *engine) touch(p string) {
	if !e.published {
		return
	}
	if e.dirty == nil {
		e.dirty = map[string]struct{}{}
	}
	e.dirty[p] = struct{}{}
}

// publish hands out the image as the snapshot at zxid; nothing is
// outstanding, and every event up to zxid has been applied.
func (e *engine) publish(zxid int64) {
	prev := e.c.current()
	if prev != nil && e.published && len(e.dirty) == 0 && zxid <= prev.zxid {
		return
	}
	e.settleKids()
	var changed []string // nil: all
	if prev != nil && e.published {
		changed = make([]string, 0, len(e.dirty))
		for p := range e.dirty {
			changed = append(changed, p)
		}
	}
	first := !e.published
	if !e.c.publish(&Snapshot{zxid: zxid, root: e.c.path, nodes: e.image}, first, changed) {
		return
	}
	e.dirty = nil // not cleared: a map keeps the room it once needed
	// The image is exact at zxid: a later delete removes a node it holds
	// or one created after zxid (deletions.go).
	maps.DeleteFunc(e.created, func(_ string, czxid int64) bool { return czxid <= zxid })
	e.published = true
	if first && e.c.wanted() > zxid {
		e.q.send(request{op: readSync})
	}
}

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// nameOf is the last name of a path or a key.
func nameOf(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// parentKey is the key of the parent of the node at key ("/a/b": "/a",
// "/a": "", the root's).
func parentKey(key string) string { return key[:strings.LastIndexByte(key, '/')] }

func joinPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}
