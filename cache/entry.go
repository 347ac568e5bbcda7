package cache

import "github.com/zkit-dev/zkit/client"

// entry is one node as the cache holds it, under its key, its path below
// the cache's root. Entries are shared by the cache's image and its
// snapshots and never modified: a change makes a new one. An entry takes
// 112 bytes: its Stat packed, and its children's names behind a pointer,
// as most nodes have none.
type entry struct {
	key  string
	data []byte
	kids *[]string // the children's names, sorted; nil when none are held (most nodes)
	stat stat
}

// stat is a node's client.Stat, but for DataLength: the length of the
// data held with it.
type stat struct {
	czxid, mzxid, pzxid, ctime, mtime, ephemeralOwner int64
	version, cversion, aversion, numChildren          int32
}

func packStat(st *client.Stat) stat {
	return stat{czxid: st.Czxid, mzxid: st.Mzxid, pzxid: st.Pzxid, ctime: st.Ctime, mtime: st.Mtime,
		ephemeralOwner: st.EphemeralOwner, version: st.Version, cversion: st.Cversion,
		aversion: st.Aversion, numChildren: st.NumChildren}
}

// fullStat is the entry's client.Stat.
func (e *entry) fullStat() client.Stat {
	s := e.stat
	return client.Stat{Czxid: s.czxid, Mzxid: s.mzxid, Ctime: s.ctime, Mtime: s.mtime, Version: s.version,
		Cversion: s.cversion, Aversion: s.aversion, EphemeralOwner: s.ephemeralOwner,
		DataLength: int32(len(e.data)), NumChildren: s.numChildren, Pzxid: s.pzxid}
}

// children returns the names of the children held.
func (e *entry) children() []string {
	if e.kids == nil {
		return nil
	}
	return *e.kids
}

// node is the Node of e, at path.
func (e *entry) node(path string) Node {
	return Node{Path: path, Data: e.data, Stat: e.fullStat(), Children: e.children()}
}
