package cache

import (
	"slices"
	"strings"

	"github.com/zkit-dev/zkit/client"
)

// Node is one cached node: its path (the caller's, inside the client's
// namespace), data and Stat, and the names of its children that the cache
// holds (sorted; none at the depth limit). A Node is never modified: do
// not modify Data or Children.
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
type Snapshot struct {
	zxid  int64
	root  string
	nodes map[string]*Node
	gen   int // reloads after a session expiry before it
}

// Zxid is the zxid the snapshot is the state at: the last transaction the
// server had applied. Every write with a zxid up to it is reflected.
func (s *Snapshot) Zxid() int64 { return s.zxid }

// Root is the path the cache follows.
func (s *Snapshot) Root() string { return s.root }

// Get returns the node at path, if it existed at the snapshot's zxid (and
// lies within the cache's depth).
func (s *Snapshot) Get(path string) (*Node, bool) {
	n, ok := s.nodes[path]
	return n, ok
}

// Len is the number of nodes.
func (s *Snapshot) Len() int { return len(s.nodes) }

// Paths returns every node's path, sorted (a parent before its children).
func (s *Snapshot) Paths() []string {
	p := make([]string, 0, len(s.nodes))
	for k := range s.nodes {
		p = append(p, k)
	}
	slices.SortFunc(p, comparePaths)
	return p
}

// Walk calls fn for every node, parents before children, in path order,
// until fn returns false.
func (s *Snapshot) Walk(fn func(n *Node) bool) {
	for _, p := range s.Paths() {
		if !fn(s.nodes[p]) {
			return
		}
	}
}

// comparePaths orders paths component by component, so that a node comes
// right before its subtree ("/a", "/a/b", "/a-c"; byte order would put
// "/a-c" before "/a/b").
func comparePaths(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}
