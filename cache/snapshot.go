package cache

import (
	"cmp"
	"slices"
	"strings"

	"github.com/zkit-dev/zkit/client"
)

// Node is one cached node as a snapshot holds it: its path (the caller's,
// inside the client's namespace), data and Stat, and the names of its
// children that the cache holds (sorted; none at the depth limit). A Node
// is a copy, but Data and Children are shared with the cache: do not
// modify them.
type Node struct {
	Path     string
	Data     []byte
	Stat     client.Stat
	Children []string
}

// Snapshot is the cached part of the tree as it was on the server at one
// zxid: every node the cache holds, exactly as the server had it once the
// transaction Zxid was applied, and none that did not exist then. It is
// immutable; a cache hands out a new one as the tree changes.
//
// One field is excepted: a Stat's Aversion. ZooKeeper sends no watch event
// for setACL, so the cache holds the Aversion it last read, until the node
// changes otherwise.
type Snapshot struct {
	zxid  int64
	root  string
	nodes trie // shared with the cache's image and the other snapshots
	gen   int  // reloads after a session expiry before it
}

// Zxid is the zxid the snapshot is the state at: the last transaction the
// server had applied. Every write with a zxid up to it is reflected.
func (s *Snapshot) Zxid() int64 { return s.zxid }

// Root is the path the cache follows.
func (s *Snapshot) Root() string { return s.root }

// Get returns the node at path, if it existed at the snapshot's zxid (and
// lies within the cache's depth).
func (s *Snapshot) Get(path string) (Node, bool) {
	key, ok := keyOf(s.root, path)
	if !ok {
		return Node{}, false
	}
	e := s.nodes.get(key)
	if e == nil {
		return Node{}, false
	}
	return e.node(path), true
}

// Len is the number of nodes.
func (s *Snapshot) Len() int { return s.nodes.n }

// Paths returns every node's path, sorted (a parent before its children).
func (s *Snapshot) Paths() []string {
	paths := make([]string, 0, s.nodes.n)
	for _, e := range s.sorted() {
		paths = append(paths, pathOf(s.root, e.key))
	}
	return paths
}

// Walk calls fn for every node, parents before children, in path order,
// until fn returns false.
func (s *Snapshot) Walk(fn func(n Node) bool) {
	for _, e := range s.sorted() {
		if !fn(e.node(pathOf(s.root, e.key))) {
			return
		}
	}
}

// sorted returns every entry, in the order of their paths.
func (s *Snapshot) sorted() []*entry {
	entries := make([]*entry, 0, s.nodes.n)
	s.nodes.each(func(e *entry) { entries = append(entries, e) })
	slices.SortFunc(entries, func(a, b *entry) int { return comparePaths(a.key, b.key) })
	return entries
}

// keyOf returns the key of path in a cache rooted at root: "" for the
// root itself, the rest of the path below it ("/a/b"); false for a path
// outside the root's subtree.
func keyOf(root, path string) (string, bool) {
	switch {
	case path == root:
		return "", true
	case root == "/":
		return path, strings.HasPrefix(path, "/")
	case strings.HasPrefix(path, root) && strings.HasPrefix(path[len(root):], "/"):
		return path[len(root):], true
	}
	return "", false
}

// pathOf is the path of key in a cache rooted at root.
func pathOf(root, key string) string {
	switch {
	case key == "":
		return root
	case root == "/":
		return key
	}
	return root + key
}

// comparePaths orders paths component by component, so that a node comes
// right before its subtree ("/a", "/a/b", "/a-c"; byte order would put
// "/a-c" before "/a/b"): in byte order, but for '/', which comes before
// every other byte.
func comparePaths(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return cmp.Compare(pathByte(a[i]), pathByte(b[i]))
		}
	}
	return cmp.Compare(len(a), len(b))
}

func pathByte(c byte) int {
	if c == '/' {
		return -1
	}
	return int(c)
}
