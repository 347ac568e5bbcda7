package inspect

import (
	"encoding/binary"
	"strconv"
)

// leaf recognises what a node without children holds: an ephemeral node
// is a rendezvous, whose data is the address published; a persistent one
// whose data decodes is a counter.
func leaf(r *Report) {
	if r.Stat.EphemeralOwner != 0 {
		r.Kind = Rendezvous
		r.Nodes = []Node{node(Holder, child{"", r.Data, r.Stat})}
		if len(r.Data) == 0 {
			r.Notes = append(r.Notes, "empty: not filled yet")
		}
		return
	}
	if len(r.Data) == 0 {
		r.Notes = append(r.Notes, "an empty node without children: a counter at 0, a set barrier (Curator's DistributedBarrier), or anything else")
		return
	}
	r.Values = values(r.Data)
	if len(r.Values) > 0 {
		r.Kind = Counter
		return
	}
	r.Notes = append(r.Notes, "no recipe's layout recognised")
}

// values decodes a counter's data in every encoding it fits: "long" (8
// bytes big-endian: Curator's DistributedAtomicLong, zkit's default), "int"
// (4 bytes: Curator's SharedCount, kazoo's Counter with support_curator),
// "text" (decimal: kazoo's Counter).
func values(data []byte) []Value {
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
