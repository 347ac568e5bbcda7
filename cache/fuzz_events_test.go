package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
)

// FuzzEvents drives the cache's event handling (engine.go, and the reads'
// bookkeeping in reads.go) without a network: the test plays the server
// and the client. The input picks a cache (root, depth, persistent or
// one-shot watches, events with or without their zxid), a first tree, and
// a sequence of steps: writes to a small tree (creates, deletes, data
// changes, multis; by another client or the cache's own), the server
// answering any read the engine has under way, that answer reaching the
// engine, the engine taking an event (from its persistent watch's feed,
// or a one-shot watch's news from the client's subscription), a WaitFor's
// sync, a reconnect and a new session. The server keeps ZooKeeper's
// promises that the engine relies on and no more: a watch event reaches
// the client before the reply to any read the server answered after the
// change, and the answers of different reads may reach the engine in any
// order.
//
// After each step the image must hang together (every node's parent holds
// it among its children, every child held is held, the byte count is the
// nodes'), and every snapshot taken must be the server's tree at the
// snapshot's zxid, within the cache's depth, with zxids that never go
// back; the deletes recorded for the events must be ones the server made.
// At the end, once the server answered everything and a sync, the
// snapshot must be the final tree. The seed corpus (below and
// testdata/fuzz/FuzzEvents) runs as a normal test.
//
// The input: a byte of mode (bit 0 one-shot watches, bits 1-2 the depth:
// 0, 1, 2 or the whole tree, bit 3 events with their zxid, bit 4 a cache
// of "/" rather than "/r", bit 5 a limit of 4 to 7 nodes, by bits 6-7),
// two bytes of the first tree (a bit for each of the 15 paths written:
// the root and three levels of "a" and "b" below it), then a step a byte:
// its low 4 bits say which (see run), its high 4 bits which path, read
// or answer, and a write of the cache's client or a multi take the next
// bytes too.
//
//	go test ./cache -run '^$' -fuzz '^FuzzEvents$' -fuzztime 60s
func FuzzEvents(f *testing.F) {
	f.Add([]byte{0x00, 0xff, 0x7f, 0x05, 0x08, 0x10, 0x09, 0x22, 0x0b, 0x06, 0x09, 0x0d})
	f.Add([]byte{0x01, 0x0f, 0x00, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x11, 0x32, 0x0c, 0x05, 0x08, 0x0e, 0x05, 0x08})
	f.Add([]byte{0x08, 0x03, 0x00, 0x01, 0x05, 0x08, 0x05, 0x08, 0x04, 0x01, 0x12, 0x0b, 0x0b, 0x05, 0x08, 0x0f})
	f.Add([]byte{0x0b, 0x07, 0x00, 0x04, 0x10, 0x21, 0x05, 0x08, 0x0c, 0x0d, 0x05, 0x08, 0x03, 0x12, 0x0c})
	f.Add([]byte{0x12, 0x1f, 0x00, 0x00, 0x10, 0x05, 0x08, 0x05, 0x08, 0x01, 0x0b, 0x02, 0x0b, 0x0d})
	f.Add([]byte{0x07, 0x7f, 0x00, 0x13, 0x05, 0x08, 0x11, 0x0b, 0x0e, 0x0b, 0x05, 0x08})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1024 {
			return // long inputs add time, not cases
		}
		h := newFuzzHarness(t, in)
		h.run()
	})
}

// fzNode is a node of the test's server.
type fzNode struct {
	data                []byte
	czxid, mzxid, pzxid int64
	version, cversion   int32
}

// fzTree is the server's tree at one zxid, by path.
type fzTree map[string]fzNode

func (tr fzTree) children(p string) []string {
	var names []string
	for q := range tr {
		if q != "/" && parentOf(q) == p {
			names = append(names, nameOf(q))
		}
	}
	slices.Sort(names)
	return names
}

func (tr fzTree) stat(p string) *client.Stat {
	n := tr[p]
	return &client.Stat{Czxid: n.czxid, Mzxid: n.mzxid, Pzxid: n.pzxid, Ctime: n.czxid * 10, Mtime: n.mzxid * 10,
		Version: n.version, Cversion: n.cversion, DataLength: int32(len(n.data)), NumChildren: int32(len(tr.children(p)))}
}

// fzNote is a change a transaction made, as the server tells watchers.
type fzNote struct {
	typ  client.EventType
	path string
}

// fzWrite is one write of a transaction.
type fzWrite struct {
	op   byte // 0 create, 1 delete, 2 set
	path string
}

// fuzzHarness is the server, the client and the cache's goroutine.
type fuzzHarness struct {
	t   *testing.T
	in  []byte
	pos int

	// The cache.
	root     string
	depth    int
	oneShot  bool
	sendZxid bool
	paths    []string // the paths written, the root first

	// The server.
	zxid    int64
	tree    fzTree
	history map[int64]fzTree                    // the tree at each zxid
	deletes map[string][]deletion               // every delete: the node's czxid and the delete's zxid
	dataW   map[string][]chan client.WatchEvent // one-shot watches set by getData and exists
	childW  map[string][]chan client.WatchEvent // and by getChildren
	started []fzStarted                         // reads sent, not answered yet
	answers []result                            // reads answered, not back at the engine yet
	feed    []client.WatchEvent                 // the persistent watch's events not taken yet
	news    []string                            // one-shot: the subscription's events not taken yet
	last    int64                               // the client's LastZxid

	// The cache's goroutine.
	c       *Cache
	q       *reads
	e       *engine
	snap    *Snapshot // the last snapshot checked
	stopped bool      // the cache stopped: over its limit
}

// fzStarted is a read sent, with whether it sets a watch.
type fzStarted struct {
	r     request
	watch bool
}

func newFuzzHarness(t *testing.T, in []byte) *fuzzHarness {
	h := &fuzzHarness{t: t, in: in, zxid: 100, history: map[int64]fzTree{},
		deletes: map[string][]deletion{}, dataW: map[string][]chan client.WatchEvent{}, childW: map[string][]chan client.WatchEvent{}}
	mode := h.next()
	h.oneShot = mode&1 != 0
	h.depth = []int{0, 1, 2, math.MaxInt}[mode>>1&3]
	h.sendZxid = mode&8 != 0
	h.root = "/r"
	if mode&16 != 0 {
		h.root = "/"
	}
	maxNodes := DefaultMaxNodes
	if mode&32 != 0 {
		maxNodes = 4 + int(mode>>6)
	}
	level := []string{h.root}
	for range 4 { // the root and three levels of two names below it
		h.paths = append(h.paths, level...)
		var below []string
		for _, p := range level {
			below = append(below, joinPath(p, "a"), joinPath(p, "b"))
		}
		level = below
	}
	h.tree = fzTree{"/": {}}
	h.history[h.zxid] = h.tree
	first := uint16(h.next()) | uint16(h.next())<<8
	for i, p := range h.paths {
		if first&(1<<i) != 0 {
			h.commit([]fzWrite{{0, p}}, false)
		}
	}

	c := &Cache{path: h.root, cfg: defaultConfig(), changed: make(chan struct{}), evDirty: map[string]struct{}{}}
	c.cfg.depth, c.cfg.maxNodes = h.depth, maxNodes
	c.life, c.stop = context.WithCancelCause(context.Background())
	c.events = &delivery{c: c, out: make(chan Event)} // records the deletes; nobody reads it
	if h.oneShot {
		c.armed = newArmed()
	}
	h.c = c
	h.load()
	return h
}

// next returns the next byte of the input, 0 past its end.
func (h *fuzzHarness) next() byte {
	if h.pos >= len(h.in) {
		return 0
	}
	b := h.in[h.pos]
	h.pos++
	return b
}

func (h *fuzzHarness) path(b byte) string { return h.paths[int(b)%len(h.paths)] }

func (h *fuzzHarness) run() {
	for h.pos < len(h.in) && !h.stopped {
		b := h.next()
		arg := b >> 4
		switch b & 15 {
		case 0, 1, 2: // a write of another client's
			h.commit([]fzWrite{{b & 15, h.path(arg)}}, false)
		case 3: // a write of the cache's client (its reply's zxid is the client's)
			w := h.next()
			h.commit([]fzWrite{{(w & 3) % 3, h.path(w >> 4)}}, true)
		case 4: // a multi: one transaction, one zxid
			var ws []fzWrite
			for range 2 + arg%3 {
				w := h.next()
				ws = append(ws, fzWrite{(w & 3) % 3, h.path(w >> 4)})
			}
			h.commit(ws, arg&8 != 0)
		case 5, 6, 7:
			if len(h.started) > 0 {
				h.answer(int(arg) % len(h.started))
			}
		case 8, 9, 10:
			if len(h.answers) > 0 {
				h.deliver(int(arg) % len(h.answers))
			}
		case 11, 12:
			h.takeOne()
		case 13: // a WaitFor for the server's zxid
			h.sync()
		case 14:
			h.reconnect(false)
		case 15:
			h.reconnect(true)
		}
		h.check()
	}
	// Everything answered and taken, then a sync: the snapshot is the
	// server's tree.
	if h.settle(); !h.stopped {
		h.sync()
		h.settle()
	}
	if h.stopped {
		return
	}
	if h.c.snap == nil || h.c.snap.zxid != h.zxid {
		var at any = "none"
		if h.c.snap != nil {
			at = h.c.snap.zxid
		}
		h.t.Fatalf("settled with the snapshot at %v, the server at %d", at, h.zxid)
	}
}

// commit applies the writes as one transaction, if they all succeed, and
// tells the watches; own says the cache's client made it, which learns
// the zxid of the reply (the server's, whether they succeeded or not).
func (h *fuzzHarness) commit(ws []fzWrite, own bool) {
	if own {
		defer func() { h.last = max(h.last, h.zxid) }()
	}
	tr := maps.Clone(h.tree)
	z := h.zxid + 1
	var notes []fzNote
	type gone struct {
		path  string
		czxid int64
	}
	var deleted []gone
	for _, w := range ws {
		p := w.path
		_, exists := tr[p]
		switch w.op {
		case 0:
			parent, ok := tr[parentOf(p)]
			if exists || !ok || p == "/" {
				return
			}
			tr[p] = fzNode{data: fmt.Appendf(nil, "c%d", z), czxid: z, mzxid: z, pzxid: z}
			parent.cversion++
			parent.pzxid = z
			tr[parentOf(p)] = parent
			notes = append(notes, fzNote{client.EventNodeCreated, p}, fzNote{client.EventNodeChildrenChanged, parentOf(p)})
		case 1:
			if !exists || p == "/" || len(tr.children(p)) > 0 {
				return
			}
			deleted = append(deleted, gone{p, tr[p].czxid})
			delete(tr, p)
			parent := tr[parentOf(p)]
			parent.cversion++
			parent.pzxid = z
			tr[parentOf(p)] = parent
			notes = append(notes, fzNote{client.EventNodeDeleted, p}, fzNote{client.EventNodeChildrenChanged, parentOf(p)})
		case 2:
			if !exists {
				return
			}
			n := tr[p]
			n.data = fmt.Appendf(nil, "s%d", z)
			n.mzxid = z
			n.version++
			tr[p] = n
			notes = append(notes, fzNote{client.EventNodeDataChanged, p})
		}
	}
	h.zxid, h.tree = z, tr
	h.history[z] = tr
	for _, d := range deleted {
		h.deletes[d.path] = append(h.deletes[d.path], deletion{czxid: d.czxid, zxid: z})
	}
	zxid := int64(0)
	if h.sendZxid {
		zxid = z
	}
	for _, n := range notes {
		h.notify(n, zxid)
	}
}

// notify hands a change to the cache's watches: its persistent watch's
// feed, or the one-shot watches it fires (and the subscription the news).
func (h *fuzzHarness) notify(n fzNote, zxid int64) {
	ev := client.WatchEvent{Type: n.typ, Path: n.path, Zxid: zxid}
	if !h.oneShot {
		under := n.path == h.root || h.root == "/" || strings.HasPrefix(n.path, h.root+"/")
		switch {
		case h.depth > 0: // recursive: no children's events of their own
			if under && n.typ != client.EventNodeChildrenChanged {
				h.feed = append(h.feed, ev)
			}
		case n.path == h.root: // a cache of the root alone: not recursive
			h.feed = append(h.feed, ev)
		}
		return
	}
	var fired []chan client.WatchEvent
	switch n.typ {
	case client.EventNodeCreated, client.EventNodeDataChanged:
		fired = h.dataW[n.path]
		delete(h.dataW, n.path)
	case client.EventNodeDeleted:
		fired = append(h.dataW[n.path], h.childW[n.path]...)
		delete(h.dataW, n.path)
		delete(h.childW, n.path)
	case client.EventNodeChildrenChanged:
		fired = h.childW[n.path]
		delete(h.childW, n.path)
	}
	if len(fired) == 0 {
		return
	}
	for _, ch := range fired {
		ch <- ev
	}
	h.news = append(h.news, n.path)
}

// answer has the server answer the i-th read sent.
func (h *fuzzHarness) answer(i int) {
	s := h.started[i]
	h.started = slices.Delete(h.started, i, i+1)
	res := result{r: s.r}
	watch := func(table map[string][]chan client.WatchEvent, p string) {
		if s.watch {
			ch := make(chan client.WatchEvent, 1)
			table[p] = append(table[p], ch)
			res.watch = ch
		}
	}
	dataOf := func(p string) result {
		one := result{r: request{op: readData, path: p, list: true}}
		if _, ok := h.tree[p]; ok {
			one.data, one.stat = h.tree[p].data, h.tree.stat(p)
		} else {
			one.err = client.ErrNoNode
		}
		return one
	}
	_, exists := h.tree[s.r.path]
	switch s.r.op {
	case readData:
		if !exists {
			res.err = client.ErrNoNode
			break
		}
		res.data, res.stat = h.tree[s.r.path].data, h.tree.stat(s.r.path)
		watch(h.dataW, s.r.path)
	case readChildren:
		if !exists {
			res.err = client.ErrNoNode
			break
		}
		res.children, res.stat = h.tree.children(s.r.path), h.tree.stat(s.r.path)
		watch(h.childW, s.r.path)
	case readExists:
		res.exists = exists
		if exists {
			res.stat = h.tree.stat(s.r.path)
		}
		watch(h.dataW, s.r.path)
	case readBatch:
		for _, p := range *s.r.batch {
			res.batch = append(res.batch, dataOf(p))
		}
	case readSync:
	}
	h.last = max(h.last, h.zxid)
	h.answers = append(h.answers, res)
}

// deliver hands the i-th answer to the engine.
func (h *fuzzHarness) deliver(i int) {
	res := h.answers[i]
	h.answers = slices.Delete(h.answers, i, i+1)
	h.q.done(res)
	h.step(h.e.reply(res))
}

// takeOne has the engine take the next event of its feed, or the next news
// of a one-shot watch.
func (h *fuzzHarness) takeOne() {
	switch {
	case !h.oneShot && len(h.feed) > 0:
		ev := h.feed[0]
		h.feed = h.feed[1:]
		h.step(h.e.event(ev))
	case h.oneShot && len(h.news) > 0:
		p := h.news[0]
		h.news = h.news[1:]
		for _, ev := range h.c.armed.poll(p) {
			if err := h.e.event(ev); err != nil {
				h.step(err)
				return
			}
		}
		h.step(nil)
	}
}

// sync does what a WaitFor for the server's zxid does.
func (h *fuzzHarness) sync() {
	if h.stopped {
		return
	}
	h.c.mu.Lock()
	h.c.want = max(h.c.want, h.zxid)
	h.c.mu.Unlock()
	if h.last < h.c.wanted() {
		h.q.send(request{op: readSync})
	}
	h.step(nil)
}

// reconnect starts a new load, as the cache does after a reconnect (the
// feed says EventResync), or under a new session.
func (h *fuzzHarness) reconnect(newSession bool) {
	if newSession {
		h.c.mu.Lock()
		h.c.gen++
		h.c.mu.Unlock()
		clear(h.dataW) // the server's watches end with the session
		clear(h.childW)
		h.news = nil
		if h.oneShot {
			h.c.armed = newArmed()
		}
	}
	h.c.setStale()
	h.started, h.answers, h.feed = nil, nil, nil
	h.load()
}

// load begins a load, as serve does.
func (h *fuzzHarness) load() {
	h.q = newReads(context.Background(), nil, h.c.armed)
	h.q.running = math.MaxInt / 2 // the test sends the reads (see pump)
	h.e = newEngine(h.c, h.q, h.c.armed)
	// What the watches reported before the load is in it.
	if h.oneShot {
		h.c.armed.pollAll()
	} else {
		h.feed = nil
	}
	h.e.start()
	h.step(nil)
}

// step ends a step of the cache's goroutine: err as serve takes it, then
// the reads it asked for are sent, and, at the top of serve's loop, the
// snapshot taken when nothing is under way.
func (h *fuzzHarness) step(err error) {
	if h.fail(err) {
		return
	}
	h.pump()
	if !h.q.idle() {
		return
	}
	zxid := h.last
	if h.oneShot {
		for _, ev := range h.c.armed.pollAll() {
			if h.fail(h.e.event(ev)) {
				return
			}
		}
	} else {
		for _, ev := range h.feed {
			if h.fail(h.e.event(ev)) {
				return
			}
		}
		h.feed = nil
	}
	h.pump()
	if h.q.idle() {
		h.e.publish(zxid)
		h.pump()
	}
}

// fail handles an error of the engine's: a limit stops the cache; nothing
// else can happen here.
func (h *fuzzHarness) fail(err error) bool {
	var fatal *fatalError
	switch {
	case err == nil:
		return false
	case errors.As(err, &fatal):
		if peak := h.peak(); peak <= h.c.cfg.maxNodes {
			h.t.Fatalf("stopped with %v; the tree held %d nodes at most", err, peak)
		}
		h.stopped = true
		return true
	}
	h.t.Fatalf("the engine failed: %v", err)
	return true
}

// peak is the most nodes the cache's part of the tree held at once.
func (h *fuzzHarness) peak() int {
	most := 0
	for _, tr := range h.history {
		n := 0
		for p := range tr {
			if _, ok := keyOf(h.root, p); ok && h.c.depth(p) <= h.depth {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// pump sends the reads ready, as reads.pump does, noting whether each sets
// a watch.
func (h *fuzzHarness) pump() {
	for _, r := range h.q.ready {
		h.started = append(h.started, fzStarted{r, h.q.oneShot.forRead(r)})
	}
	h.q.ready = nil
}

// settle has the server answer everything, the engine take everything.
func (h *fuzzHarness) settle() {
	for range 100_000 {
		switch {
		case h.stopped:
			return
		case len(h.started) > 0:
			h.answer(0)
		case len(h.answers) > 0:
			h.deliver(0)
		case len(h.feed) > 0 || len(h.news) > 0:
			h.takeOne()
		default:
			return
		}
		h.check()
	}
	h.t.Fatal("the engine does not settle")
}

// check checks the image, and the snapshot if it is a new one.
func (h *fuzzHarness) check() {
	h.t.Helper()
	e := h.e
	var bytes int64
	count := 0
	e.image.each(func(n *entry) {
		count++
		p := pathOf(h.root, n.key)
		bytes += int64(len(p) + len(n.data))
		if d := h.c.depth(p); d > h.depth {
			h.t.Fatalf("the image holds %s, %d levels below the root", p, d)
		}
		if n.key != "" {
			parent := e.image.get(parentKey(n.key))
			if parent == nil || !e.hasKid(parent, nameOf(n.key)) {
				h.t.Fatalf("the image holds %s, but its parent does not", p)
			}
		}
		for _, name := range e.kidNames(n) {
			if e.image.get(n.key+"/"+name) == nil {
				h.t.Fatalf("the image's %s holds a child %s that it does not hold", p, name)
			}
		}
	})
	if count != e.image.n {
		h.t.Fatalf("the image counts %d nodes, holds %d", e.image.n, count)
	}
	if bytes != e.bytes {
		h.t.Fatalf("the image counts %d bytes, holds %d", e.bytes, bytes)
	}
	h.c.mu.Lock()
	for p, list := range h.c.deletions {
		for _, d := range list {
			if !slices.Contains(h.deletes[p], d) {
				h.t.Fatalf("a delete of %s (czxid %d) recorded at %d: the server's were %v", p, d.czxid, d.zxid, h.deletes[p])
			}
		}
	}
	h.c.deletions = nil
	s := h.c.snap
	h.c.mu.Unlock()
	if s == nil || s == h.snap {
		return
	}
	if h.snap != nil && s.zxid < h.snap.zxid {
		h.t.Fatalf("a snapshot at %d after one at %d", s.zxid, h.snap.zxid)
	}
	if s.zxid > h.last {
		h.t.Fatalf("a snapshot at %d, past the client's last zxid %d", s.zxid, h.last)
	}
	h.snap = s
	if err := h.same(s); err != nil {
		h.t.Fatalf("the snapshot at %d is not the server's tree then: %v", s.zxid, err)
	}
}

// same reports how s differs from the server's tree at its zxid.
func (h *fuzzHarness) same(s *Snapshot) error {
	tr := h.history[s.zxid]
	var want []string
	for p := range tr {
		if _, ok := keyOf(h.root, p); ok && h.c.depth(p) <= h.depth {
			want = append(want, p)
		}
	}
	slices.SortFunc(want, comparePaths)
	if got := s.Paths(); !slices.Equal(got, want) {
		return fmt.Errorf("nodes %v, want %v", got, want)
	}
	for _, p := range want {
		n, _ := s.Get(p)
		if !bytes.Equal(n.Data, tr[p].data) {
			return fmt.Errorf("%s: data %q, want %q", p, n.Data, tr[p].data)
		}
		if st := *tr.stat(p); n.Stat != st {
			return fmt.Errorf("%s: stat %+v, want %+v", p, n.Stat, st)
		}
		var kids []string
		if h.c.depth(p) < h.depth {
			kids = tr.children(p)
		}
		if !slices.Equal(n.Children, kids) {
			return fmt.Errorf("%s: children %v, want %v", p, n.Children, kids)
		}
	}
	return nil
}
