package inspect

import (
	"net"

	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
)

// kazoo's lock nodes: "<32 hex>__lock__<seq>" for Lock, Election and
// Semaphore's lock, and for WriteLock beside "__rlock__" for ReadLock. A
// kind names the recipe whose layout its nodes share (layout.Lock,
// layout.RWLock).
var (
	kazooLockKind  = recipes.Kind{Marker: "__lock__", Exclusive: true, Recipe: layout.Lock.Name}
	kazooWriteKind = recipes.Kind{Marker: "__lock__", Exclusive: true, Recipe: layout.RWLock.Name}
	kazooReadKind  = recipes.Kind{Marker: "__rlock__", Recipe: layout.RWLock.Name}
)

// kazooPartyMarker ends the name of a kazoo Party member: "<32 hex>__party__".
const kazooPartyMarker = "__party__"

// kazooLockSuffix names the lock kazoo's Semaphore takes at "<path>-__lock__".
const kazooLockSuffix = "-__lock__"

func isKazoo(k recipes.Kind) bool {
	return k == kazooLockKind || k == kazooWriteKind || k == kazooReadKind
}

// queueOrigin tells who made a queue node: kazoo by its kind; Curator by
// its default data, the address of the host it runs on, in the node types
// where zkit writes nothing unless told to.
func queueOrigin(n recipes.Node, data []byte) Origin {
	switch {
	case isKazoo(n.Kind):
		return Kazoo
	case n.Kind.Recipe != layout.Election.Name && net.ParseIP(string(data)) != nil:
		return Curator
	}
	return ""
}

// isKazooID reports a UUID as kazoo names nodes: 32 hex digits.
func isKazooID(name string) bool {
	if len(name) != 32 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isHex(name[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// memberOrigin tells who made a double-barrier member by its name: zkit's
// UUIDs are version 8, Curator's version 4, kazoo's have no dashes.
func memberOrigin(name string) Origin {
	switch {
	case isKazooID(name):
		return Kazoo
	case name[14] == '8':
		return Zkit
	case name[14] == '4':
		return Curator
	}
	return ""
}
