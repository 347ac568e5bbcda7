package refserver

import (
	"sort"
	"strings"

	"github.com/zkit-dev/zkit/internal/jute"
)

// watchMode is how a watch behaves when it fires.
type watchMode uint8

const (
	watchStandard            watchMode = iota // one-shot
	watchPersistent                           // addWatch PERSISTENT
	watchPersistentRecursive                  // addWatch PERSISTENT_RECURSIVE
)

// watchTable is one of ZooKeeper's two server-side watch managers: data
// watches (set by getData and exists) or child watches (set by
// getChildren). Watches belong to connections, as in ZooKeeper: a closed
// connection loses them and the client re-registers them with setWatches.
type watchTable struct {
	byPath    map[string]map[*conn]watchMode
	byConn    map[*conn]map[string]struct{}
	recursive int // number of persistent recursive watches
}

func newWatchTable() *watchTable {
	return &watchTable{byPath: map[string]map[*conn]watchMode{}, byConn: map[*conn]map[string]struct{}{}}
}

func (w *watchTable) add(path string, c *conn, mode watchMode) {
	path = javaString(path)
	m := w.byPath[path]
	if m == nil {
		m = map[*conn]watchMode{}
		w.byPath[path] = m
	}
	if old, ok := m[c]; ok && old == watchPersistentRecursive {
		w.recursive--
	}
	m[c] = mode
	if mode == watchPersistentRecursive {
		w.recursive++
	}
	p := w.byConn[c]
	if p == nil {
		p = map[string]struct{}{}
		w.byConn[c] = p
	}
	p[path] = struct{}{}
}

func (w *watchTable) remove(path string, c *conn) bool {
	path = javaString(path)
	m := w.byPath[path]
	mode, ok := m[c]
	if !ok {
		return false
	}
	if mode == watchPersistentRecursive {
		w.recursive--
	}
	delete(m, c)
	if len(m) == 0 {
		delete(w.byPath, path)
	}
	if p := w.byConn[c]; p != nil {
		delete(p, path)
		if len(p) == 0 {
			delete(w.byConn, c)
		}
	}
	return true
}

func (w *watchTable) removeConn(c *conn) {
	for path := range w.byConn[c] {
		m := w.byPath[path]
		if m[c] == watchPersistentRecursive {
			w.recursive--
		}
		delete(m, c)
		if len(m) == 0 {
			delete(w.byPath, path)
		}
	}
	delete(w.byConn, c)
}

// contains answers checkWatches as ZooKeeper 3.8's
// WatchManager.containsWatcher does: whether any connection, not only c,
// has a watch of this table's type registered on exactly path. A persistent
// recursive watch on an ancestor does not count, although it would fire.
//
// ZooKeeper walks from path towards the root, working out each next path
// (cutting at the last '/') before it looks at the current one; it goes
// beyond path itself only while the table holds a persistent recursive
// watch. So "" never has a watch, and a path with no '/' to cut at (once
// the walk goes up: any path not starting with '/') fails the request,
// which answers MarshallingError (ok false).
func (w *watchTable) contains(path string) (found, ok bool) {
	p := javaString(path)
	for leaf := true; p != ""; leaf = false {
		next := ""
		if p != "/" {
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				return false, false
			}
			if next = p[:i]; next == "" {
				next = "/"
			}
		}
		if leaf && len(w.byPath[p]) > 0 {
			return true, true
		}
		if w.recursive == 0 {
			break
		}
		p = next
	}
	return false, true
}

// count is the number of (path, connection) watches.
func (w *watchTable) count() int {
	n := 0
	for _, m := range w.byPath {
		n += len(m)
	}
	return n
}

// parentOf returns the parent of an absolute path, "/" for children of the
// root and "" for the root itself.
func parentOf(p string) string {
	if p == "/" || p == "" {
		return ""
	}
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// trigger fires the watches of path for an event of type typ, as
// WatchManager.triggerWatch: one-shot watches on path are removed, and
// persistent recursive watches on ancestors fire too (except for
// NodeChildrenChanged). Connections in suppress are not notified. It returns
// the set of connections whose watches matched.
func (w *watchTable) trigger(path string, typ int32, suppress map[*conn]bool, send func(*conn, int32, string)) map[*conn]bool {
	var hit map[*conn]bool
	add := func(c *conn) {
		if hit == nil {
			hit = map[*conn]bool{}
		}
		hit[c] = true
	}
	if m := w.byPath[path]; m != nil {
		for c, mode := range m {
			switch mode {
			case watchPersistentRecursive:
				if typ != jute.EventNodeChildrenChanged {
					add(c)
				}
			case watchPersistent:
				add(c)
			default:
				add(c)
				delete(m, c)
				if p := w.byConn[c]; p != nil {
					delete(p, path)
					if len(p) == 0 {
						delete(w.byConn, c)
					}
				}
			}
		}
		if len(m) == 0 {
			delete(w.byPath, path)
		}
	}
	if w.recursive > 0 && typ != jute.EventNodeChildrenChanged {
		for p := parentOf(path); p != ""; p = parentOf(p) {
			for c, mode := range w.byPath[p] {
				if mode == watchPersistentRecursive {
					add(c)
				}
			}
		}
	}
	if len(hit) == 0 {
		return nil
	}
	conns := make([]*conn, 0, len(hit))
	for c := range hit {
		if !suppress[c] {
			conns = append(conns, c)
		}
	}
	sort.Slice(conns, func(i, j int) bool { return conns[i].id < conns[j].id })
	for _, c := range conns {
		send(c, typ, path)
	}
	return hit
}
