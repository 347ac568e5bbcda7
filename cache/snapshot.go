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
//
// One field is excepted: a Stat's Aversion. ZooKeeper sends no watch event
// for setACL, so the cache holds the Aversion it last read, until the node
// changes otherwise.
type Snapshot struct {
	zxid   int64
	root   string
	layers []layer // oldest first; see layer
	n      int     // nodes
	gen    int     // reloads after a session expiry before it
}

// layer is a set of changes: a node, or nil for one deleted. A snapshot
// is its layers applied oldest first, and a new snapshot is the last one's
// layers plus one of its changes; a layer at least half as large as the
// one below it is merged into it (into a new map: layers are shared, never
// modified). So taking a snapshot costs the changes it brings, times the
// logarithm of the tree's size, and a look-up walks a logarithmic number
// of layers.
type layer map[string]*Node

// next returns the layers of s with changes applied (s nil: the empty
// tree).
func (s *Snapshot) next(changes layer) []layer {
	var layers []layer
	if s != nil {
		if len(changes) == 0 {
			return s.layers
		}
		layers = slices.Clip(s.layers)
	}
	layers = append(layers, changes)
	for k := len(layers); k >= 2 && 2*len(layers[k-1]) >= len(layers[k-2]); k = len(layers) {
		merged := make(layer, len(layers[k-2])+len(layers[k-1]))
		for _, l := range layers[k-2:] {
			for p, node := range l {
				if node == nil && k == 2 {
					delete(merged, p) // nothing below to hide
				} else {
					merged[p] = node
				}
			}
		}
		layers = append(layers[:k-2], merged)
	}
	return layers
}

// each calls fn for every node, in no order.
func (s *Snapshot) each(fn func(n *Node)) {
	seen := make(map[string]bool, s.n)
	for i := len(s.layers) - 1; i >= 0; i-- {
		for p, n := range s.layers[i] {
			if !seen[p] {
				seen[p] = true
				if n != nil {
					fn(n)
				}
			}
		}
	}
}

// Zxid is the zxid the snapshot is the state at: the last transaction the
// server had applied. Every write with a zxid up to it is reflected.
func (s *Snapshot) Zxid() int64 { return s.zxid }

// Root is the path the cache follows.
func (s *Snapshot) Root() string { return s.root }

// Get returns the node at path, if it existed at the snapshot's zxid (and
// lies within the cache's depth).
func (s *Snapshot) Get(path string) (*Node, bool) {
	for i := len(s.layers) - 1; i >= 0; i-- {
		if n, ok := s.layers[i][path]; ok {
			return n, n != nil
		}
	}
	return nil, false
}

// Len is the number of nodes.
func (s *Snapshot) Len() int { return s.n }

// Paths returns every node's path, sorted (a parent before its children).
func (s *Snapshot) Paths() []string {
	p := make([]string, 0, s.n)
	s.each(func(n *Node) { p = append(p, n.Path) })
	slices.SortFunc(p, comparePaths)
	return p
}

// Walk calls fn for every node, parents before children, in path order,
// until fn returns false.
func (s *Snapshot) Walk(fn func(n *Node) bool) {
	for _, p := range s.Paths() {
		n, _ := s.Get(p)
		if !fn(n) {
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
