package cache

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/zkit-dev/zkit/client"
)

// EventType says what an Event reports.
type EventType int

// Event types.
const (
	Created     EventType = iota + 1 // a node appeared
	Changed                          // a node's data changed (its Stat's Mzxid)
	Deleted                          // a node disappeared
	Initialized                      // the nodes of the first snapshot have all been reported
	Reset                            // the session expired: the tree was read again; the differences follow
)

var eventNames = map[EventType]string{Created: "created", Changed: "changed", Deleted: "deleted",
	Initialized: "initialized", Reset: "reset"}

func (t EventType) String() string { return eventNames[t] }

// Event is one change of the cached tree. Data and Stat are the node's
// (none for Deleted, Initialized and Reset); Data is shared with the
// snapshots that hold the node: do not modify it. Zxid is the transaction the
// event brings the receiver up to: the node's Mzxid for Created and
// Changed, for Deleted the zxid of the snapshot in which the node is gone
// (ZooKeeper does not say when a node was deleted; for a node deleted and
// created again, the new node's Czxid), for Initialized that of the first
// snapshot, and for Reset the zxid the receiver had reached (the
// differences that follow bring it up to the snapshot read under the new
// session). Zxids never decrease from one event to the next.
type Event struct {
	Type EventType
	Path string
	Data []byte
	Stat client.Stat
	Zxid int64
}

// Events returns the cache's events: every change between the snapshots
// the cache takes, as created, changed and deleted events per node in zxid
// order, Initialized once after the nodes of the first snapshot, and Reset
// when a session expiry made the cache read the tree again (then the
// differences it found). The channel is closed when the cache stops.
//
// Delivery is level-triggered, as recipes.Follow's: events are the
// difference between what the receiver was told last and the latest
// snapshot, computed when it is ready to receive. A slow receiver never
// holds the cache up, and it always ends on the current tree; what it
// misses is intermediate: a node changed twice meanwhile is one Changed
// with the latest data (its Stat.Version tells how many versions it
// skipped), one created and deleted meanwhile is not reported at all.
// Every call returns the same channel: one receiver per cache.
func (c *Cache) Events() <-chan Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		c.events = &delivery{c: c, out: make(chan Event)}
		go c.events.run()
	}
	return c.events.out
}

// delivery computes and sends the events.
//
// What the receiver knows of the nodes is a trie of the entries it was
// told of, told, and the events it was sent since that trie was brought
// up to date: it is brought up to date only when a snapshot comes before
// the receiver has every event of the last, and when the receiver has
// them all it is the snapshot's own, which costs nothing more.
type delivery struct {
	c    *Cache
	out  chan Event
	told trie      // what the receiver knew when the events pending were computed
	base *Snapshot // the snapshot the pending events lead to
	gen  int
	init bool  // Initialized was sent
	at   int64 // the zxid of the last event sent
}

func (d *delivery) run() {
	defer close(d.out)
	var queue []Event // from told to base
	sent := 0         // queue[:sent] were sent
	for {
		d.c.mu.Lock()
		s, ch := d.c.snap, d.c.changed
		all, dirty := d.c.evAll, d.c.evDirty
		d.c.evAll, d.c.evDirty = false, map[string]struct{}{}
		d.c.mu.Unlock()
		if s != nil && s != d.base {
			if d.base == nil {
				d.gen = s.gen
			}
			d.learn(queue[:sent])
			if all || d.base == nil || !d.init || s.gen != d.gen {
				dirty = nil // everything
			} else {
				for _, ev := range queue[sent:] {
					dirty[ev.Path] = struct{}{}
				}
			}
			d.base = s
			queue, sent = d.diff(s, dirty), 0
		}
		if sent == len(queue) && d.base != nil {
			// The receiver knows base, as it was told of its nodes: the
			// entries differ only in what no event reports (a parent's
			// children).
			d.told = d.base.nodes
			queue, sent = nil, 0
		}
		var out chan Event
		var next Event
		if sent < len(queue) {
			out, next = d.out, queue[sent]
		}
		select {
		case out <- next:
			sent++
			d.sent(next)
		case <-ch:
		case <-d.c.done:
			return
		}
	}
}

// diff lists what the receiver must be told to know s: about the paths
// in dirty (those that may have changed since the receiver's view was
// last compared), or all paths if dirty is nil.
func (d *delivery) diff(s *Snapshot, dirty map[string]struct{}) []Event {
	var ev []Event
	compare := func(p string) {
		key, _ := keyOf(s.root, p)
		old, n := d.told.get(key), s.nodes.get(key)
		switch {
		case n == nil && old != nil:
			ev = append(ev, Event{Type: Deleted, Path: p, Zxid: s.zxid})
		case n == nil:
		case old == nil:
			ev = append(ev, nodeEvent(Created, p, n))
		case old.stat.czxid != n.stat.czxid:
			ev = append(ev, Event{Type: Deleted, Path: p, Zxid: n.stat.czxid}, nodeEvent(Created, p, n))
		case old.stat.mzxid != n.stat.mzxid || !bytes.Equal(old.data, n.data):
			ev = append(ev, nodeEvent(Changed, p, n))
		}
	}
	if dirty != nil {
		for p := range dirty {
			compare(p)
		}
	} else {
		s.nodes.each(func(n *entry) { compare(pathOf(s.root, n.key)) })
		d.told.each(func(n *entry) {
			if s.nodes.get(n.key) == nil {
				compare(pathOf(s.root, n.key))
			}
		})
	}
	slices.SortStableFunc(ev, func(a, b Event) int {
		if c := cmp.Compare(a.Zxid, b.Zxid); c != 0 {
			return c
		}
		if (a.Type == Deleted) != (b.Type == Deleted) {
			if a.Type == Deleted {
				return -1
			}
			return 1
		}
		if a.Type == Deleted {
			return comparePaths(b.Path, a.Path) // children before their parent
		}
		return comparePaths(a.Path, b.Path)
	})
	if s.gen != d.gen {
		// Not s's zxid: the differences that follow are older.
		ev = append([]Event{{Type: Reset, Zxid: d.at}}, ev...)
	}
	if !d.init {
		ev = append(ev, Event{Type: Initialized, Zxid: s.zxid})
	}
	return ev
}

func nodeEvent(t EventType, p string, n *entry) Event {
	return Event{Type: t, Path: p, Data: n.data, Stat: n.fullStat(), Zxid: n.stat.mzxid}
}

// sent records that the receiver has ev; what it knows of the nodes is
// brought up to date later (learn).
func (d *delivery) sent(ev Event) {
	d.at = max(d.at, ev.Zxid)
	switch ev.Type {
	case Initialized:
		d.init = true
	case Reset:
		d.gen = d.base.gen
	}
}

// learn brings told up to date with events of base's that were sent.
func (d *delivery) learn(sent []Event) {
	for _, ev := range sent {
		key, _ := keyOf(d.base.root, ev.Path)
		switch ev.Type {
		case Created, Changed:
			d.told = d.told.with(d.base.nodes.get(key))
		case Deleted:
			d.told = d.told.without(key)
		}
	}
}
