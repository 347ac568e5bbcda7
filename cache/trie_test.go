package cache

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// The trie against a map, under random changes, with hash functions that
// make keys share a slot at every level, and share the whole hash: every
// version a change left behind still holds what it held.
func TestTrie(t *testing.T) {
	hashes := map[string]func(string) uint64{
		"maphash": hashOf,
		// Only the bits of levels 0 and 11 differ: long chains of levels.
		"chains": func(k string) uint64 { return hashOf(k) & (0b11<<55 | 0b11) },
		// A third of the keys each share one hash: the list past its bits.
		"equal": func(k string) uint64 { return uint64(len(k) % 3) },
	}
	for name, hash := range hashes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rnd := rand.New(rand.NewPCG(1, 2))
			type version struct {
				root *tnode
				want map[string]*entry
			}
			var versions []version
			var root *tnode
			want := map[string]*entry{}
			for i := range 20_000 {
				key := fmt.Sprintf("/k%d", rnd.IntN(300))
				if rnd.IntN(3) == 0 {
					var removed bool
					root, removed = root.without(key, hash(key), 0)
					if _, ok := want[key]; removed != ok {
						t.Fatalf("op %d: without(%s) removed: %v, want %v", i, key, removed, ok)
					}
					delete(want, key)
				} else {
					e := &entry{key: key}
					var added bool
					root, added = root.with(e, hash(key), 0, hash)
					if _, ok := want[key]; added == ok {
						t.Fatalf("op %d: with(%s) added: %v, want %v", i, key, added, !ok)
					}
					want[key] = e
				}
				if i%100 == 0 {
					versions = append(versions, version{root, maps.Clone(want)})
				}
			}
			versions = append(versions, version{root, want})
			for i, v := range versions {
				got := map[string]*entry{}
				v.root.each(func(e *entry) { got[e.key] = e })
				if !maps.Equal(got, v.want) {
					t.Fatalf("version %d holds %d entries, want %d", i, len(got), len(v.want))
				}
				for k := range 300 {
					key := fmt.Sprintf("/k%d", k)
					if e := v.root.get(key, hash(key)); e != v.want[key] {
						t.Fatalf("version %d: get(%s) = %v, want %v", i, key, e, v.want[key])
					}
				}
				checkLevels(t, v.root, 0)
			}
		})
	}
}

// checkLevels fails if a level below the root holds a single entry, which
// without moves up, or nothing.
func checkLevels(t *testing.T, n *tnode, level int) {
	t.Helper()
	if n == nil {
		return
	}
	for _, s := range n.slots {
		if s.next == nil {
			continue
		}
		if len(s.next.slots) == 0 || len(s.next.slots) == 1 && s.next.slots[0].next == nil {
			t.Fatalf("a level %d holds %d slots", level+1, len(s.next.slots))
		}
		checkLevels(t, s.next, level+1)
	}
}

// The trie's count follows adds and removals, and a removal of a key it
// does not hold changes nothing.
func TestTrieCount(t *testing.T) {
	t.Parallel()
	var tr trie
	for i := range 1000 {
		tr = tr.with(&entry{key: fmt.Sprint(i)})
	}
	tr = tr.with(&entry{key: "7"})
	before := tr
	tr = tr.without("absent")
	if tr != before || tr.n != 1000 {
		t.Fatalf("%d entries after removing an absent key, want 1000 and the same trie", tr.n)
	}
	for i := range 1000 {
		tr = tr.without(fmt.Sprint(i))
	}
	if tr.n != 0 || tr.root != nil {
		t.Fatalf("%d entries, root %v after removing every key", tr.n, tr.root)
	}
}
