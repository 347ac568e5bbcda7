package layout

import (
	"math/bits"
	"strings"
)

// Signs are what a look at a path can show of the recipe that uses it, one
// bit each.
type Signs uint16

// The signs, by what shows them. A sign of a child is shown by one child of
// the path; SignOpenRound and SignKeys by the children together.
const (
	// SignPath: the path's node exists. Every recipe but one that only
	// reads leaves it.
	SignPath Signs = 1 << iota
	// SignEphemeralPath: the path's node is ephemeral (a rendezvous's zr).
	SignEphemeralPath
	// SignData: the path's node holds data that is no JSON object (a
	// counter's value). A double barrier's directory holds JSON.
	SignData
	// SignChildren: the path's node has children, whatever they are.
	SignChildren
	// SignQueueNode: a child named as a queue recipe's node (Queue
	// markers: a lock's, a read/write lock's, an election's).
	SignQueueNode
	// SignLeaseNode: a child named as a semaphore's lease.
	SignLeaseNode
	// SignDelta: a child named as a counter's delta.
	SignDelta
	// SignFlag: a child named ReadyFlag, persistent where its Stat was
	// read (a configuration's, an open double barrier's).
	SignFlag
	// SignOpenRound: the flag beside a double barrier's member (a UUID).
	SignOpenRound
	// SignKeys: the flag beside children that are no double barrier's
	// members: a configuration's keys.
	SignKeys
	// SignEphemeralChild: an ephemeral child, whatever its name. Only a
	// child whose Stat was read shows it, as the next three.
	SignEphemeralChild
	// SignMember: an ephemeral child that is no protected sequence node (a
	// queue recipe's or a semaphore's "_c_<uuid>-lock-<seq>"): a name
	// someone chose, which a group takes for a member's.
	SignMember
	// SignInstance: a child without children whose data is a discovery
	// instance.
	SignInstance
	// SignSubdir: a child that has children itself (a semaphore's
	// directories).
	SignSubdir

	signCount = iota
)

// signNames name the signs, for messages and tests.
var signNames = [signCount]string{
	"path", "ephemeral path", "data", "children", "queue node", "lease node", "delta",
	"flag", "open round", "keys", "ephemeral child", "member", "instance", "subdirectory",
}

// Has reports whether s holds every sign of t.
func (s Signs) Has(t Signs) bool { return s&t == t }

// Any reports whether s and t share a sign.
func (s Signs) Any(t Signs) bool { return s&t != 0 }

// String names the signs of s: "queue node|flag".
func (s Signs) String() string {
	var names []string
	for s != 0 {
		i := bits.TrailingZeros16(uint16(s))
		names = append(names, signNames[i])
		s &^= 1 << i
	}
	return strings.Join(names, "|")
}
