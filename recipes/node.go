package recipes

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
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
// lock, rwlock and election share Curator's layouts.
var (
	MutexKind = Kind{Marker: "lock-", Exclusive: true, Recipe: "lock"}                       // InterProcessMutex
	ReadKind  = Kind{Marker: "__READ__", Recipe: "rwlock"}                                   // InterProcessReadWriteLock, readers
	WriteKind = Kind{Marker: "__WRIT__", Exclusive: true, Recipe: "rwlock"}                  // InterProcessReadWriteLock, writers
	LatchKind = Kind{Marker: "latch-", Exclusive: true, Recipe: "election", Confirmed: true} // LeaderLatch
	// LeaseKind is the shape of a counting semaphore's lease nodes
	// (InterProcessSemaphoreV2's "<path>/leases/_c_<uuid>-lease-<seq>").
	// They are counted, not queued: it is no queue recipe's kind.
	LeaseKind = Kind{Marker: "lease-", Recipe: "semaphore"}
	// CounterAddKind is the shape of the deltas a contended counter's
	// writers leave for each other to apply ("<path>/_c_<uuid>-<delta>-add-<seq>",
	// children of the counter's node). The counter applies them itself:
	// it is no queue recipe's kind either.
	CounterAddKind = Kind{Marker: "add-", Exclusive: true, Recipe: "counter"}
)

// ReadyName is the child whose existence marks a configuration published
// with the paper's ready flag (configwatch) and an open round of a double
// barrier (Curator's DistributedDoubleBarrier): no queue recipe's node, so
// a queue joiner that finds one at its first listing refuses the path
// (ErrOtherRecipe), and so do the recipes that call CheckNotReadyDir.
const ReadyName = "ready"

// IsBarrierMember reports whether name is a double barrier's member node
// (Curator's DistributedDoubleBarrier's and zkit's): a canonical UUID,
// lowercase hexadecimal digits in groups of 8-4-4-4-12.
func IsBarrierMember(name string) bool {
	if len(name) != 36 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// OpenBarrierOf reports whether children, a node's listing, show an open
// round of a double barrier: its ReadyName beside a member's node
// (IsBarrierMember). A recipe that keeps its state in the node itself (a
// counter) refuses such a node with ErrOtherRecipe: the barrier's
// accounting reads the directory's data.
func OpenBarrierOf(children []string) bool {
	return slices.Contains(children, ReadyName) && slices.ContainsFunc(children, IsBarrierMember)
}

// queueKinds are every queue recipe's kinds, to tell another recipe's
// nodes in a directory (see Queue).
var queueKinds = []Kind{MutexKind, ReadKind, WriteKind, LatchKind}

// QueueNodeOf returns the first of children that is a node of a queue
// recipe (lock, rwlock, election) or a semaphore's lease: the sign that
// the directory is one of theirs. A recipe that keeps its state in the
// node itself (a counter) refuses such a node with ErrOtherRecipe.
func QueueNodeOf(children []string) (Node, bool) {
	for _, ch := range children {
		if n, ok := ParseNode(ch, queuedKinds...); ok {
			return n, true
		}
	}
	return Node{}, false
}

// queuedKinds are the kinds of QueueNodeOf.
var queuedKinds = append(slices.Clip(queueKinds), LeaseKind)

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

// seqText is ZooKeeper's text for a sequence number ("%010d").
func seqText(seq int64) string { return fmt.Sprintf("%010d", seq) }

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
	best := -1
	var kind Kind
	for _, k := range kinds {
		if k.Marker == "" {
			continue
		}
		if i := strings.LastIndex(name, k.Marker); i > best {
			best, kind = i, k
		}
	}
	if best < 0 {
		return Node{}, false
	}
	digits := name[best+len(kind.Marker):]
	seq, ok := parseSeq(digits)
	if !ok {
		return Node{}, false
	}
	return Node{Name: name, Seq: seq, Kind: kind}, true
}

// parseSeq parses the server's sequence suffix: decimal digits, at most 19
// (ZooKeeper writes 10, zero-padded), whose value fits in an int64. A
// larger value is not a sequence number: wrapped around, it would sort
// below every real node and block the queue for good. A negative number
// is one only in ZooKeeper's own text for a wrapped int32 counter.
func parseSeq(s string) (int64, bool) {
	if strings.HasPrefix(s, "-") {
		n, ok := parseSeq(s[1:])
		if !ok || n == 0 || -n < math.MinInt32 || seqText(-n) != s {
			return 0, false
		}
		return -n, true
	}
	if s == "" || len(s) > 19 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

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
