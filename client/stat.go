package client

import "github.com/zkit-dev/zkit/internal/jute"

// Stat is a znode's metadata, as the server returns it.
type Stat struct {
	Czxid          int64 // the zxid of the change that created the node
	Mzxid          int64 // the zxid of the change that last wrote its data
	Ctime          int64 // when it was created, in milliseconds since the epoch
	Mtime          int64 // when its data was last written, likewise
	Version        int32 // the number of changes to its data
	Cversion       int32 // the number of changes to its children
	Aversion       int32 // the number of changes to its ACL
	EphemeralOwner int64 // the id of the session that owns it when ephemeral, else 0
	DataLength     int32 // the length of its data
	NumChildren    int32 // the number of its children
	Pzxid          int64 // the zxid of the change that last created or deleted a child
}

// statOf is st as the client returns it.
func statOf(st *jute.Stat) *Stat {
	s := Stat(*st)
	return &s
}
