package membership

import (
	"slices"

	"github.com/zkit-dev/zkit/client"
)

// Entry is one member of a group as read from ZooKeeper.
type Entry struct {
	ID   string
	Data []byte
	Stat *client.Stat
}

// entry is the member whose node is the child id of the group's node.
func entry(id string, data []byte, st *client.Stat) *Entry {
	return &Entry{ID: id, Data: data, Stat: st}
}

// sameGroup reports whether two snapshots show the same members with the
// same data versions.
func sameGroup(a, b []Entry) bool {
	return slices.EqualFunc(a, b, func(x, y Entry) bool {
		return x.ID == y.ID && x.Stat.Czxid == y.Stat.Czxid && x.Stat.Mzxid == y.Stat.Mzxid
	})
}
