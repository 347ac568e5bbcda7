package membership

import (
	"slices"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
)

// Entry is one member of a group as read from ZooKeeper.
type Entry struct {
	ID   string
	Data []byte
	Stat *client.Stat
}

// entry is the member whose node is the child id of the group's node, or
// nil for a child that is no member (see isMember).
func entry(id string, data []byte, st *client.Stat) *Entry {
	if !isMember(id, st) {
		return nil
	}
	return &Entry{ID: id, Data: data, Stat: st}
}

// isMember reports whether the child id of the group's node, with Stat st,
// may be a member (layout.Membership). A member's node is ephemeral
// (zkit's and Curator's GroupMember's alike), so a persistent child is
// another recipe's (a semaphore's directories, a configuration's key, a
// double barrier's flag). A lock's, read/write lock's, election's or
// lease's node in Curator's protected form, "_c_<uuid>-lock-0000000042",
// is no member either: no id a user chooses looks like that.
func isMember(id string, st *client.Stat) bool {
	return layout.Membership.IsMember(layout.Child{Name: id, Stat: st})
}

// sameGroup reports whether two snapshots show the same members with the
// same data versions.
func sameGroup(a, b []Entry) bool {
	return slices.EqualFunc(a, b, func(x, y Entry) bool {
		return x.ID == y.ID && x.Stat.Czxid == y.Stat.Czxid && x.Stat.Mzxid == y.Stat.Mzxid
	})
}
