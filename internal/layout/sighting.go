package layout

import (
	"encoding/json"

	"github.com/zkit-dev/zkit/client"
)

// Sighting is what a look at a path showed: any of the node's Stat, its
// data and its children, as far as they were read.
type Sighting struct {
	Path string
	Stat *client.Stat // the node's; nil when it was not read
	Data []byte       // the node's data; nil when it was not read
	// Children are the children seen: every child of a listing, or the
	// few read one by one.
	Children []Child
}

// Child is one child of a path, as far as it was read.
type Child struct {
	Name string
	Stat *client.Stat // nil when it was not read
	Data []byte       // nil when it was not read
}

// Listed is the sighting of a listing of path's children, by name.
func Listed(path string, names []string) Sighting {
	kids := make([]Child, len(names))
	for i, n := range names {
		kids[i].Name = n
	}
	return Sighting{Path: path, Children: kids}
}

// Seen is what one child shows.
type Seen struct {
	Signs Signs
	// Owner and Seq are, for a child named as a sequence node (a queue
	// recipe's, a lease, a delta), the recipe that names its nodes so and
	// the node's sequence number.
	Owner *Recipe
	Seq   int64
}

// See tells what a child shows by its name, and by its Stat and data
// where they were read: SignQueueNode, SignLeaseNode or SignDelta for a
// sequence node's name (the last marker in the name wins), SignFlag,
// SignEphemeralChild, SignMember, SignInstance, SignSubdir.
func See(ch Child) Seen {
	var s Seen
	if i, seq, ok := ParseName(ch.Name, seqKinds, seqKind.markerOf); ok {
		s.Signs, s.Owner, s.Seq = seqKinds[i].sign, seqKinds[i].owner, seq
	}
	st := ch.Stat
	if ch.Name == ReadyFlag && (st == nil || st.EphemeralOwner == 0) {
		s.Signs |= SignFlag
	}
	if st == nil {
		return s
	}
	if st.EphemeralOwner != 0 {
		s.Signs |= SignEphemeralChild
		if !(s.Signs.Any(SignQueueNode|SignLeaseNode) && isProtected(ch.Name)) {
			s.Signs |= SignMember // a protected sequence name is none a member chooses
		}
	}
	if st.NumChildren > 0 {
		s.Signs |= SignSubdir
	} else if isInstance(ch.Data) {
		s.Signs |= SignInstance
	}
	return s
}

// signs tells what s shows, and which child shows each sign of a child
// first (for messages); children are the signs of each child, in order.
func (s *Sighting) signs() (all Signs, children []Seen) {
	if st := s.Stat; st != nil {
		all |= SignPath
		if st.EphemeralOwner != 0 {
			all |= SignEphemeralPath
		}
		if st.NumChildren > 0 {
			all |= SignChildren
		}
	}
	if len(s.Data) > 0 && s.Data[0] != '{' {
		all |= SignData
	}
	children = make([]Seen, len(s.Children))
	flag, members, others := false, false, false
	for i, ch := range s.Children {
		children[i] = See(ch)
		all |= children[i].Signs | SignChildren
		switch {
		case ch.Name == ReadyFlag:
			flag = true
		case isUUID(ch.Name):
			members = true
		default:
			others = true
		}
	}
	switch {
	case flag && members:
		all |= SignOpenRound
	case flag && others:
		all |= SignKeys
	}
	return all, children
}

// isUUID reports whether name is a canonical UUID, lowercase hexadecimal
// digits in groups of 8-4-4-4-12: a double barrier's member (Curator's
// DistributedDoubleBarrier's and zkit's).
func isUUID(name string) bool {
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

// isProtected reports a name in Curator's protected form, "_c_<uuid>-...".
func isProtected(name string) bool {
	_, _, ok := client.ParseProtected(name)
	return ok
}

// instanceJSON is what a discovery instance's JSON (Curator's
// x-discovery ServiceInstance) must carry.
type instanceJSON struct {
	Name       *string `json:"name"`
	ID         *string `json:"id"`
	Registered *int64  `json:"registrationTimeUTC"`
}

// ParseInstance reads data as a discovery instance's, and returns its
// service's name and its id.
func ParseInstance(data []byte) (service, id string, ok bool) {
	var in instanceJSON
	if json.Unmarshal(data, &in) != nil || in.Name == nil || in.ID == nil || in.Registered == nil {
		return "", "", false
	}
	return *in.Name, *in.ID, true
}

func isInstance(data []byte) bool {
	_, _, ok := ParseInstance(data)
	return ok
}
