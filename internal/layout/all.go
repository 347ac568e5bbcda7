package layout

import (
	"encoding/binary"
	"strconv"

	"github.com/zkit-dev/zkit/client"
)

// The names in zkit's layouts. zkit's recipes lay out their nodes as
// Apache Curator's do, where Curator has the recipe.
const (
	// Markers of sequence nodes, "<prefix><marker><seq>", where the prefix
	// is Curator's protection "_c_<uuid>-".
	MutexMarker = "lock-"    // a lock's node (InterProcessMutex), and a semaphore's lock's
	ReadMarker  = "__READ__" // a read/write lock's reader (InterProcessReadWriteLock)
	WriteMarker = "__WRIT__" // a read/write lock's writer
	LatchMarker = "latch-"   // an election's candidate (LeaderLatch)
	LeaseMarker = "lease-"   // a semaphore's lease (InterProcessSemaphoreV2)
	// DeltaMarker ends the name of a delta a contended counter's writer
	// leaves for the others to apply: "_c_<uuid>-<delta>-add-<seq>".
	DeltaMarker = "add-"

	// ReadyFlag is the persistent child whose existence marks a published
	// configuration (the paper's ready znode) and the open round of a
	// double barrier (DistributedDoubleBarrier's "ready").
	ReadyFlag = "ready"

	// A semaphore's directories (InterProcessSemaphoreV2's): the lock its
	// waiters queue in, and its leases.
	LocksDir  = "locks"
	LeasesDir = "leases"
)

// The layouts. Each says, in its documentation, where its nodes are.
var (
	// Election: "<path>/_c_<uuid>-latch-<seq>", ephemeral, data = the
	// candidate's id; the lowest leads.
	Election = queue("election", "election", []string{LatchMarker}, nil)
	// RWLock: "<path>/_c_<uuid>-__READ__<seq>" and "__WRIT__<seq>",
	// ephemeral; a writer holds when lowest, a reader when no writer is
	// lower.
	RWLock = queue("rwlock", "read/write lock", []string{ReadMarker, WriteMarker}, []string{ReadMarker})
	// Lock: "<path>/_c_<uuid>-lock-<seq>", ephemeral; the lowest holds.
	Lock = queue("lock", "lock", []string{MutexMarker}, nil)

	// Counter: the value in the path's data, a long (8 bytes, big-endian),
	// an int (4 bytes) or decimal text (see CounterValues); contended
	// writers leave deltas for each other, ephemeral sequential children
	// "<path>/_c_<uuid>-<delta>-add-<seq>".
	Counter = &Recipe{
		Name: "counter", Noun: "counter",
		Leaves:  SignPath | SignData,
		Refuses: SignEphemeralPath | SignQueueNode | SignLeaseNode | SignOpenRound,
		Takes:   SignData | SignDelta,
		Writes:  SignData,
		fits:    fitsCounter,
	}

	// Semaphore: the lock of its waiters in "<path>/locks" (a Lock), its
	// leases "<path>/leases/_c_<uuid>-lease-<seq>", ephemeral.
	Semaphore = &Recipe{
		Name: "semaphore", Noun: "semaphore",
		Leaves:  SignPath | SignChildren | SignSubdir,
		Refuses: SignFlag | SignEphemeralPath,
		Takes:   SignSubdir,
		Writes:  SignSubdir,
		fits: func(s *Sighting) bool {
			return len(s.Children) > 0 && every(s.Children, func(ch Child) bool { return ch.Name == LocksDir || ch.Name == LeasesDir })
		},
	}

	// DoubleBarrier: its members "<path>/<uuid>", ephemeral, named by
	// canonical UUIDs; "<path>/ready", persistent, while a round is past
	// its threshold; the last outcome in the path's data, JSON.
	DoubleBarrier = &Recipe{
		Name: "double barrier", Noun: "double barrier",
		Leaves:  SignPath | SignChildren | SignFlag | SignOpenRound | SignEphemeralChild | SignMember,
		Refuses: SignQueueNode | SignLeaseNode | SignData | SignKeys | SignEphemeralPath,
		Takes:   SignFlag | SignOpenRound,
		Writes:  SignFlag,
		member: func(ch Child) bool {
			return isUUID(ch.Name) && (ch.Stat == nil || ch.Stat.EphemeralOwner != 0)
		},
		fits: func(s *Sighting) bool {
			return every(s.Children, func(ch Child) bool {
				return ch.Name == ReadyFlag || isUUID(ch.Name) && ephemeral(ch.Stat)
			}) && some(s.Children, func(ch Child) bool { return ch.Name != ReadyFlag })
		},
	}

	// Configwatch: its keys "<path>/<key>" and "<path>/ready", persistent,
	// without children.
	Configwatch = &Recipe{
		Name: "configwatch", Noun: "configuration",
		Leaves:  SignPath | SignChildren | SignFlag | SignKeys,
		Refuses: SignEphemeralChild | SignSubdir | SignEphemeralPath,
		Takes:   SignFlag | SignKeys,
		Writes:  SignFlag | SignKeys,
		fits: func(s *Sighting) bool {
			return every(s.Children, func(ch Child) bool {
				return persistent(ch.Stat) && ch.Stat.NumChildren == 0
			}) && some(s.Children, func(ch Child) bool { return ch.Name == ReadyFlag })
		},
	}

	// Discovery: its instances "<base>/<service>/<id>", ephemeral, data =
	// Curator's x-discovery JSON; the path is a service's directory.
	Discovery = &Recipe{
		Name: "discovery", Noun: "service",
		Leaves:  SignPath | SignChildren | SignEphemeralChild | SignMember | SignInstance,
		Refuses: SignFlag | SignEphemeralPath,
		Takes:   SignInstance,
		fits: func(s *Sighting) bool {
			return len(s.Children) > 0 && every(s.Children, func(ch Child) bool { return See(ch).Signs.Has(SignInstance) })
		},
	}

	// Membership: its members "<path>/<id>", ephemeral, data = payload.
	Membership = &Recipe{
		Name: "membership", Noun: "group",
		Leaves:  SignPath | SignChildren | SignEphemeralChild | SignMember,
		Refuses: SignFlag | SignEphemeralPath,
		Takes:   SignMember,
		Blind: "a member is an ephemeral node of any name: the group lists another recipe's ephemeral " +
			"nodes (a double barrier's members, a service's instances) as members while they are there",
		member: func(ch Child) bool { return See(ch).Signs.Has(SignMember) },
		fits: func(s *Sighting) bool {
			return len(s.Children) > 0 && every(s.Children, func(ch Child) bool { return ephemeral(ch.Stat) })
		},
	}

	// Rendezvous: the path's node, zr, ephemeral, data = what the master
	// published (empty: not yet). Its recipe creates zr itself, so it
	// finds any node there taken (recipes.ErrConflict).
	Rendezvous = &Recipe{
		Name: "rendezvous", Noun: "rendezvous",
		Leaves:  SignPath | SignEphemeralPath | SignData,
		Refuses: SignPath,
		Takes:   SignPath | SignData,
		Writes:  SignPath | SignData,
		fits: func(s *Sighting) bool {
			return len(s.Children) == 0 && ephemeral(s.Stat)
		},
	}

	// Barrier, a simple barrier: the path's node itself, persistent,
	// without data or children (Curator's DistributedBarrier).
	Barrier = &Recipe{
		Name: "barrier", Noun: "barrier",
		Leaves:  SignPath,
		Refuses: SignEphemeralPath | SignChildren,
		Takes:   SignPath,
		Writes:  SignPath,
		Blind: "a set barrier is a persistent node without data or children, which is what any recipe's " +
			"path is before its nodes are there, and a counter's node whatever its value: its Set finds " +
			"another recipe's node set and its Remove deletes it, and another recipe takes the barrier's " +
			"node for its own (its Wait and Remove refuse it once the other's nodes are in it)",
		fits: func(s *Sighting) bool {
			return len(s.Children) == 0 && persistent(s.Stat) && len(s.Data) == 0
		},
	}

	// Cache only reads: it leaves nothing at a path, and refuses none.
	Cache = &Recipe{Name: "cache", Noun: "cache"}
)

// All are the layouts of every recipe, in the order Classify tries them:
// the most particular first.
var All = []*Recipe{Election, RWLock, Lock, Counter, Semaphore, DoubleBarrier, Configwatch,
	Discovery, Membership, Rendezvous, Barrier, Cache}

// queue is the layout of a queue recipe, whose nodes are sequence nodes
// named with markers, taking turns in its path's directory (shared: the
// markers of nodes that share their turn).
func queue(name, noun string, markers, shared []string) *Recipe {
	r := &Recipe{
		Name: name, Noun: noun, Queue: markers, Shared: shared,
		Leaves:  SignPath | SignChildren | SignQueueNode | SignEphemeralChild,
		Refuses: SignQueueNode | SignFlag | SignEphemeralPath,
		Takes:   SignQueueNode,
	}
	r.fits = func(s *Sighting) bool {
		return some(s.Children, func(ch Child) bool { return See(ch).Owner == r })
	}
	return r
}

// seqKind is a marker of sequence nodes: the sign such a name shows, and
// whose nodes they are.
type seqKind struct {
	marker string
	sign   Signs
	owner  *Recipe
}

func (k seqKind) markerOf() string { return k.marker }

// seqKinds are every marker of sequence nodes.
var seqKinds []seqKind

func init() {
	for _, r := range All {
		for _, m := range r.Queue {
			seqKinds = append(seqKinds, seqKind{m, SignQueueNode, r})
		}
	}
	seqKinds = append(seqKinds, seqKind{LeaseMarker, SignLeaseNode, Semaphore}, seqKind{DeltaMarker, SignDelta, Counter})
}

// fitsCounter: a persistent node whose every child is a delta, and whose
// data is a counter's value (empty reads as 0 where deltas show it is a
// counter's; an empty node without children fits a barrier as well).
func fitsCounter(s *Sighting) bool {
	if !persistent(s.Stat) || !every(s.Children, func(ch Child) bool { return See(ch).Signs.Has(SignDelta) }) {
		return false
	}
	return len(s.Data) == 0 || len(CounterValues(s.Data)) > 0
}

// Value is a counter's value in one encoding.
type Value struct {
	Encoding string // "long", "int" or "text"
	Value    int64
}

// CounterValues decodes a counter's data in every encoding it fits: "long"
// (8 bytes big-endian: Curator's DistributedAtomicLong, zkit's default),
// "int" (4 bytes: Curator's SharedCount, kazoo's Counter with
// support_curator), "text" (decimal: kazoo's Counter).
func CounterValues(data []byte) []Value {
	var out []Value
	switch len(data) {
	case 8:
		out = append(out, Value{"long", int64(binary.BigEndian.Uint64(data))})
	case 4:
		out = append(out, Value{"int", int64(int32(binary.BigEndian.Uint32(data)))})
	}
	if v, err := strconv.ParseInt(string(data), 10, 64); err == nil {
		out = append(out, Value{"text", v})
	}
	return out
}

// every reports whether each child satisfies f.
func every(children []Child, f func(Child) bool) bool {
	for _, ch := range children {
		if !f(ch) {
			return false
		}
	}
	return true
}

// some reports whether a child satisfies f.
func some(children []Child, f func(Child) bool) bool {
	for _, ch := range children {
		if f(ch) {
			return true
		}
	}
	return false
}

// ephemeral reports a node read and found ephemeral.
func ephemeral(st *client.Stat) bool { return st != nil && st.EphemeralOwner != 0 }

// persistent reports a node read and found persistent.
func persistent(st *client.Stat) bool { return st != nil && st.EphemeralOwner == 0 }
