package recipes

import (
	"cmp"
	"slices"
	"strings"

	"github.com/zkit-dev/zkit/internal/layout"
)

// Kind is one shape of sequence node in a queue directory: names that end
// with Marker followed by the sequence number the server appended
// ("lock-0000000042"), optionally behind Curator's protection prefix
// ("_c_<uuid>-lock-0000000042").
type Kind struct {
	// Marker precedes the sequence number: "lock-" for a mutex (Curator's
	// InterProcessMutex), "__READ__" and "__WRIT__" for a read/write lock
	// (InterProcessReadWriteLock), "latch-" for LeaderLatch.
	Marker string
	// Exclusive nodes wait for every lower node, and every higher node waits
	// for them. Shared nodes wait only for lower exclusive nodes.
	Exclusive bool
	// Recipe names the recipe the nodes belong to, in telemetry ("lock").
	Recipe string
	// Confirmed kinds have every turn confirmed by a listing before it is
	// acted on (Ticket.Confirm), which finds the ticket's own node gone if
	// it is: a waiting ticket of such a kind watches its own node only
	// once it has waited for confirmedSelfDelay (see Ticket.Wait).
	Confirmed bool
}

// The node shapes of the queue recipes, as Curator names them: zkit's
// lock, rwlock and election share Curator's layouts (their markers are
// declared with the rest of every recipe's layout, in internal/layout).
var (
	MutexKind = Kind{Marker: layout.MutexMarker, Exclusive: true, Recipe: layout.Lock.Name}                      // InterProcessMutex: "lock-"
	ReadKind  = Kind{Marker: layout.ReadMarker, Recipe: layout.RWLock.Name}                                      // InterProcessReadWriteLock, readers: "__READ__"
	WriteKind = Kind{Marker: layout.WriteMarker, Exclusive: true, Recipe: layout.RWLock.Name}                    // InterProcessReadWriteLock, writers: "__WRIT__"
	LatchKind = Kind{Marker: layout.LatchMarker, Exclusive: true, Recipe: layout.Election.Name, Confirmed: true} // LeaderLatch: "latch-"
)

// Node is one parsed member of a queue directory.
type Node struct {
	Name string // the child name, as listed
	// Seq is the sequence number the server appended: negative once the
	// directory's counter has wrapped (see ParseNode).
	Seq  int64
	Kind Kind
}

// Before reports whether n comes before other in queue order, which is
// the order the server created them in: by sequence number, with the
// numbers of a wrapped counter after every other (see Created). Nodes with
// the same sequence number are in neither order (see SortNodes).
//
// ZooKeeper numbers a directory's sequential nodes with its child-change
// counter (cversion, an int32, written "%010d"). After 2^31-1 it writes
// negative numbers, "-2147483648" first and "-000000001" last, and only
// after 2^32 changes does it start again at 0. Creation order keeps zkit's
// queues (lock, read/write lock, election) correct past the wrap: a new
// node still waits for the older ones. Apache Curator compares the text
// after the marker as a string (its fixForSorting), and kazoo does the
// same for "-" followed by ten digits: past the wrap each new node sorts
// before the older ones and a new Curator contender holds at once, beside
// the holder. zkit does not follow them there, since that would end mutual
// exclusion among zkit's own contenders; so past the wrap a zkit and a
// Curator contender on one path do not agree on the order (Curator does
// not agree with itself either). A lock directory that is a container
// starts again at 0 once the server reaps it empty.
func (n Node) Before(other Node) bool { return n.Created() < other.Created() }

// Created is n's place in the order in which its directory's nodes were
// created: Seq, with a negative one read as the unsigned 32-bit counter
// ZooKeeper wrote it from (-2147483648 comes right after 2147483647).
func (n Node) Created() int64 {
	if n.Seq < 0 {
		return n.Seq + 1<<32
	}
	return n.Seq
}

// Blocks reports whether n, when lower in the queue than other (Before),
// makes other wait: an exclusive node waits for everything lower, and
// everything higher waits for an exclusive node.
func (n Node) Blocks(other Node) bool {
	return n.Before(other) && (n.Kind.Exclusive || other.Kind.Exclusive)
}

// ParseNode parses a child name against kinds and reports whether it is a
// queue member: it must end with one kind's Marker followed by decimal
// digits only, or by a negative sequence number exactly as ZooKeeper
// writes one once the directory's counter has wrapped (its cversion, an
// int32, written with "%010d": "-000000001", "-2147483648"). The last
// marker in the name wins, so a protection id or a prefix cannot be
// mistaken for the sequence number.
func ParseNode(name string, kinds ...Kind) (Node, bool) {
	i, seq, ok := layout.ParseName(name, kinds, Kind.marker)
	if !ok {
		return Node{}, false
	}
	return Node{Name: name, Seq: seq, Kind: kinds[i]}, true
}

func (k Kind) marker() string { return k.Marker }

// SortNodes parses children against kinds, drops the names that are not
// queue members, and returns the members in queue order (Node.Before),
// then by name.
func SortNodes(children []string, kinds ...Kind) []Node {
	nodes := make([]Node, 0, len(children))
	for _, ch := range children {
		if n, ok := ParseNode(ch, kinds...); ok {
			nodes = append(nodes, n)
		}
	}
	slices.SortFunc(nodes, func(a, b Node) int {
		if c := cmp.Compare(a.Created(), b.Created()); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return nodes
}
