package cache

import (
	"hash/maphash"
	"math/bits"
)

// trie holds the cache's nodes by key: a persistent hash trie (a hash
// array mapped trie). It is a value that no change modifies: with and
// without return a new trie that shares every part of the old one but the
// few trie nodes on the way from its root to the key, which they copy. So
// the image and every snapshot share what did not change between them, a
// snapshot is taken in constant time, and a look-up reads a handful of
// nodes whatever the tree's size.
//
// A key's 64-bit hash picks, 5 bits a level, one of 32 slots in each
// level: a slot holds an entry, or the next level when more than one key
// shares those bits. Keys whose hashes are equal, rare as they are, end in
// a last level that is a plain list.
type trie struct {
	root *tnode
	n    int // entries
}

// tnode is one level of a trie: its slots in use, in the order of their
// bits.
type tnode struct {
	used  uint32
	slots []tslot
}

// tslot holds an entry or the next level.
type tslot struct {
	e    *entry
	next *tnode
}

const (
	slotBits  = 5
	listLevel = (64 + slotBits - 1) / slotBits // the level past the hash's bits
)

var seed = maphash.MakeSeed()

var emptyLevel tnode // shared: levels are never modified

func hashOf(key string) uint64 { return maphash.String(seed, key) }

// slot returns the bit of h's slot at level, and the slot's index in n
// (where it is, or would go).
func (n *tnode) slot(h uint64, level int) (uint32, int) {
	bit := uint32(1) << (h >> (level * slotBits) & (1<<slotBits - 1))
	return bit, bits.OnesCount32(n.used & (bit - 1))
}

// get returns the entry of key, or nil.
func (t trie) get(key string) *entry { return t.root.get(key, hashOf(key)) }

// with returns t with e in it, in place of the entry of its key if any.
func (t trie) with(e *entry) trie {
	root, added := t.root.with(e, hashOf(e.key), 0, hashOf)
	t.root = root
	if added {
		t.n++
	}
	return t
}

// without returns t without the entry of key.
func (t trie) without(key string) trie {
	root, removed := t.root.without(key, hashOf(key), 0)
	if removed {
		t.root = root
		t.n--
	}
	return t
}

// each calls fn for every entry, in no order.
func (t trie) each(fn func(e *entry)) { t.root.each(fn) }

// with returns a copy of n (nil: an empty level) with e, h its key's
// hash by the function hash, and whether e's key is new.
func (n *tnode) with(e *entry, h uint64, level int, hash func(string) uint64) (*tnode, bool) {
	if n == nil {
		n = &emptyLevel
	}
	if level == listLevel {
		for i, s := range n.slots {
			if s.e.key == e.key {
				return n.replaced(i, tslot{e: e}), false
			}
		}
		return n.inserted(0, len(n.slots), tslot{e: e}), true
	}
	bit, i := n.slot(h, level)
	if n.used&bit == 0 {
		return n.inserted(bit, i, tslot{e: e}), true
	}
	s := n.slots[i]
	switch {
	case s.next != nil:
		next, added := s.next.with(e, h, level+1, hash)
		return n.replaced(i, tslot{next: next}), added
	case s.e.key == e.key:
		return n.replaced(i, tslot{e: e}), false
	}
	// Two keys share the slot: the next level holds them both.
	next, _ := (*tnode)(nil).with(s.e, hash(s.e.key), level+1, hash)
	next, _ = next.with(e, h, level+1, hash)
	return n.replaced(i, tslot{next: next}), true
}

// without returns a copy of n without key (nil if nothing is left), h its
// hash, and whether key was there; n itself if it was not.
func (n *tnode) without(key string, h uint64, level int) (*tnode, bool) {
	if n == nil {
		return nil, false
	}
	if level == listLevel {
		for i, s := range n.slots {
			if s.e.key == key {
				return n.removed(0, i), true
			}
		}
		return n, false
	}
	bit, i := n.slot(h, level)
	if n.used&bit == 0 {
		return n, false
	}
	s := n.slots[i]
	if s.next == nil {
		if s.e.key != key {
			return n, false
		}
		return n.removed(bit, i), true
	}
	next, removed := s.next.without(key, h, level+1)
	switch {
	case !removed:
		return n, false
	case next == nil:
		return n.removed(bit, i), true
	case len(next.slots) == 1 && next.slots[0].next == nil:
		// A lone entry moves up: no level holds a single entry.
		return n.replaced(i, next.slots[0]), true
	}
	return n.replaced(i, tslot{next: next}), true
}

// get returns the entry of key in n, h its hash, or nil.
func (n *tnode) get(key string, h uint64) *entry {
	for level := 0; n != nil; level++ {
		if level == listLevel {
			for _, s := range n.slots {
				if s.e.key == key {
					return s.e
				}
			}
			return nil
		}
		bit, i := n.slot(h, level)
		if n.used&bit == 0 {
			return nil
		}
		if s := n.slots[i]; s.next == nil {
			if s.e.key == key {
				return s.e
			}
			return nil
		}
		n = n.slots[i].next
	}
	return nil
}

func (n *tnode) each(fn func(e *entry)) {
	if n == nil {
		return
	}
	for _, s := range n.slots {
		if s.next != nil {
			s.next.each(fn)
		} else {
			fn(s.e)
		}
	}
}

// replaced returns a copy of n with slot i set to s.
func (n *tnode) replaced(i int, s tslot) *tnode {
	c := &tnode{used: n.used, slots: make([]tslot, len(n.slots))}
	copy(c.slots, n.slots)
	c.slots[i] = s
	return c
}

// inserted returns a copy of n with s in slot i, bit its bit.
func (n *tnode) inserted(bit uint32, i int, s tslot) *tnode {
	c := &tnode{used: n.used | bit, slots: make([]tslot, len(n.slots)+1)}
	copy(c.slots, n.slots[:i])
	c.slots[i] = s
	copy(c.slots[i+1:], n.slots[i:])
	return c
}

// removed returns a copy of n without slot i, bit its bit, or nil if it
// was the last.
func (n *tnode) removed(bit uint32, i int) *tnode {
	if len(n.slots) == 1 {
		return nil
	}
	c := &tnode{used: n.used &^ bit, slots: make([]tslot, len(n.slots)-1)}
	copy(c.slots, n.slots[:i])
	copy(c.slots[i:], n.slots[i+1:])
	return c
}
