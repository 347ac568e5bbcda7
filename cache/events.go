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
// snapshots that hold the node: do not modify it. Zxid is the transaction
// the event reports: the node's Mzxid for Created and Changed (the last
// write of what the event shows); for Deleted the delete's zxid when the
// server said it (ZooKeeper 3.9 and later send it with the watch event that
// announces the delete), else 0: unknown, since a deleted node leaves no
// Stat to read it from (ZooKeeper 3.8; a delete while the connection was
// lost); for Initialized the zxid of the first snapshot; and for Reset
// the zxid the receiver had reached (the differences that follow bring it
// up to the snapshot read under the new session). The zxids that are not
// 0 never decrease from one event to the next.
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
	c         *Cache
	out       chan Event
	told      trie      // what the receiver knew when the events pending were computed
	base      *Snapshot // the snapshot the pending events lead to
	deletions deletions // when nodes the receiver may know were deleted
	gen       int
	init      bool  // Initialized was sent
	at        int64 // the zxid the receiver has reached
}

// queued is an event to send, and the zxid it brings the receiver up to,
// which orders the events: its Zxid, or, for a delete of unknown zxid, the
// latest it can have been (the snapshot's zxid, or the Czxid of the node
// that took the path's place).
type queued struct {
	Event
	at int64
}

func (d *delivery) run() {
	defer close(d.out)
	var queue []queued // from told to base
	sent := 0          // queue[:sent] were sent
	for {
		d.c.mu.Lock()
		s, ch := d.c.snap, d.c.changed
		all, dirty := d.c.evAll, d.c.evDirty
		d.c.evAll, d.c.evDirty = false, map[string]struct{}{}
		d.deletions.take(d.c.deletions)
		d.c.deletions = nil
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
		var next queued
		if sent < len(queue) {
			out, next = d.out, queue[sent]
		}
		select {
		case out <- next.Event:
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
func (d *delivery) diff(s *Snapshot, dirty map[string]struct{}) []queued {
	var ev []queued
	compare := func(p string) {
		key, _ := keyOf(s.root, p)
		old, n := d.told.get(key), s.nodes.get(key)
		switch {
		case n == nil && old != nil:
			ev = append(ev, d.deleted(p, old, s.zxid))
		case n == nil:
		case old == nil:
			ev = append(ev, nodeEvent(Created, p, n))
		case old.stat.czxid != n.stat.czxid:
			ev = append(ev, d.deleted(p, old, n.stat.czxid), nodeEvent(Created, p, n))
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
	d.deletions.keep(func(p string, del deletion) bool {
		// Needed while the receiver knows the node, or may yet be told of
		// it: s holds it, or a later snapshot may (deleted after s).
		key, _ := keyOf(s.root, p)
		old, n := d.told.get(key), s.nodes.get(key)
		return old != nil && old.stat.czxid == del.czxid || n != nil && n.stat.czxid == del.czxid || del.zxid > s.zxid
	})
	slices.SortStableFunc(ev, func(a, b queued) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
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
		ev = append([]queued{at(Event{Type: Reset, Zxid: d.at})}, ev...)
	}
	if !d.init {
		ev = append(ev, at(Event{Type: Initialized, Zxid: s.zxid}))
	}
	return ev
}

// deleted is the event that old, the node at p, is gone, by a delete no
// later than latest: with the delete's zxid when the server said it.
func (d *delivery) deleted(p string, old *entry, latest int64) queued {
	zxid := d.deletions.of(p, old.stat.czxid)
	if zxid == 0 {
		return queued{Event{Type: Deleted, Path: p}, latest}
	}
	return at(Event{Type: Deleted, Path: p, Zxid: zxid})
}

func nodeEvent(t EventType, p string, n *entry) queued {
	return at(Event{Type: t, Path: p, Data: n.data, Stat: n.fullStat(), Zxid: n.stat.mzxid})
}

// at queues ev at its own zxid.
func at(ev Event) queued { return queued{ev, ev.Zxid} }

// sent records that the receiver has the event q; what it knows of the
// nodes is brought up to date later (learn).
func (d *delivery) sent(q queued) {
	d.at = max(d.at, q.at)
	switch q.Type {
	case Initialized:
		d.init = true
	case Reset:
		d.gen = d.base.gen
	}
}

// learn brings told up to date with events of base's that were sent.
func (d *delivery) learn(sent []queued) {
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
