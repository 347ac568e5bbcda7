package cache

import "slices"

// When nodes were deleted. A deleted node leaves nothing to read: a read
// learns that it is gone, not when. The zxid of its delete is known only
// from the watch event that announced it, when the server sends one there
// (ZooKeeper 3.9 and later; client.WatchEvent.Zxid). The engine records
// it for the node that was deleted, by that node's Czxid: by the time the
// receiver of the events is told, the path may hold another node. The
// delivery looks it up when it tells the receiver that the node it knew
// is gone.
//
// Which node a delete at zxid Z removed is the last one created at the
// path before Z. The engine knows it from its image (a read of the node
// before the delete) or from the event of the node's creation (whose zxid
// is the node's Czxid), whichever is later but before Z. Both are needed:
// a node created before the watch was set has no creation event, and an
// answer to a read sent before an earlier delete may come back after that
// delete's event and hold an older node than the one Z removed. A node
// the engine knows neither way is one the receiver was never told of.
// The engine also keeps the Czxid of each node its image lets go, since a
// read that finds a node gone can be applied before the event of its
// delete. It keeps these Czxids only until the next snapshot at or after
// them: the image, exact at the snapshot's zxid, then holds each such node
// unless its delete was already noted, so they grow with the changes
// since the last snapshot, not with the tree.

// deletions are the known deletes, by path (as events name them): the
// Czxid of each node deleted and the zxid of its delete.
type deletions map[string][]deletion

type deletion struct{ czxid, zxid int64 }

// deleted records that the node at path created at czxid was deleted at
// zxid, for the events. A cache whose events nobody reads keeps nothing.
func (c *Cache) deleted(path string, czxid, zxid int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		return
	}
	if c.deletions == nil {
		c.deletions = deletions{}
	}
	if d := (deletion{czxid, zxid}); !slices.Contains(c.deletions[path], d) { // one-shot data and child watches both report it
		c.deletions[path] = append(c.deletions[path], d)
	}
}

// take adds more to ds.
func (ds *deletions) take(more deletions) {
	for p, list := range more {
		if *ds == nil {
			*ds = deletions{}
		}
		(*ds)[p] = append((*ds)[p], list...)
	}
}

// of is the zxid of the delete of the node at path created at czxid, 0
// when unknown.
func (ds deletions) of(path string, czxid int64) int64 {
	for _, d := range ds[path] {
		if d.czxid == czxid {
			return d.zxid
		}
	}
	return 0
}

// keep drops the deletes for which needed is false: those of nodes the
// receiver does not know and will not be told of.
func (ds deletions) keep(needed func(path string, d deletion) bool) {
	for p, list := range ds {
		kept := list[:0]
		for _, d := range list {
			if needed(p, d) {
				kept = append(kept, d)
			}
		}
		if len(kept) == 0 {
			delete(ds, p)
		} else {
			ds[p] = kept
		}
	}
}
