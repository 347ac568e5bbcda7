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
		c.events = &delivery{c: c, out: make(chan Event), told: map[string]*Node{}}
		go c.events.run()
	}
	return c.events.out
}

// delivery computes and sends the events.
type delivery struct {
	c         *Cache
	out       chan Event
	told      map[string]*Node // what the receiver knows
	base      *Snapshot        // the snapshot the pending events lead to
	deletions deletions        // when nodes the receiver may know were deleted
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
	var queue []queued
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
			if all || d.base == nil || !d.init || s.gen != d.gen {
				dirty = nil // everything
			} else {
				for _, ev := range queue {
					dirty[ev.Path] = struct{}{}
				}
			}
			d.base = s
			queue = d.diff(s, dirty)
		}
		var out chan Event
		var next queued
		if len(queue) > 0 {
			out, next = d.out, queue[0]
		}
		select {
		case out <- next.Event:
			queue = queue[1:]
			d.apply(next)
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
		old, told := d.told[p]
		n, ok := s.Get(p)
		switch {
		case !ok && told:
			ev = append(ev, d.deleted(old, s.zxid))
		case !ok:
		case !told:
			ev = append(ev, nodeEvent(Created, n))
		case old.Stat.Czxid != n.Stat.Czxid:
			ev = append(ev, d.deleted(old, n.Stat.Czxid), nodeEvent(Created, n))
		case old.Stat.Mzxid != n.Stat.Mzxid || !bytes.Equal(old.Data, n.Data):
			ev = append(ev, nodeEvent(Changed, n))
		}
	}
	if dirty != nil {
		for p := range dirty {
			compare(p)
		}
	} else {
		s.each(func(n *Node) { compare(n.Path) })
		for p := range d.told {
			if _, ok := s.Get(p); !ok {
				compare(p)
			}
		}
	}
	d.deletions.keep(func(p string, del deletion) bool {
		// Needed while the receiver knows the node, or may yet be told of
		// it: s holds it, or a later snapshot may (deleted after s).
		old, told := d.told[p]
		n, ok := s.Get(p)
		return told && old.Stat.Czxid == del.czxid || ok && n.Stat.Czxid == del.czxid || del.zxid > s.zxid
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

// deleted is the event that the node old is gone, by a delete no later
// than latest: with the delete's zxid when the server said it.
func (d *delivery) deleted(old *Node, latest int64) queued {
	zxid := d.deletions.of(old.Path, old.Stat.Czxid)
	if zxid == 0 {
		return queued{Event{Type: Deleted, Path: old.Path}, latest}
	}
	return at(Event{Type: Deleted, Path: old.Path, Zxid: zxid})
}

func nodeEvent(t EventType, n *Node) queued {
	return at(Event{Type: t, Path: n.Path, Data: n.Data, Stat: n.Stat, Zxid: n.Stat.Mzxid})
}

// at queues ev at its own zxid.
func at(ev Event) queued { return queued{ev, ev.Zxid} }

// apply records that the receiver has the event q.
func (d *delivery) apply(q queued) {
	ev := q.Event
	d.at = max(d.at, q.at)
	switch ev.Type {
	case Created, Changed:
		d.told[ev.Path], _ = d.base.Get(ev.Path)
	case Deleted:
		delete(d.told, ev.Path)
	case Initialized:
		d.init = true
	case Reset:
		d.gen = d.base.gen
	}
}
