package barrier

import (
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/zkit-dev/zkit/internal/layout"
)

// readyName is the node whose existence opens a double barrier, as
// Curator's DistributedDoubleBarrier names it (layout.ReadyFlag, a
// configuration's flag too).
const readyName = layout.ReadyFlag

// newMemberName returns a fresh member node name: a UUID in canonical form,
// as Curator names its members, but with version 8 (RFC 9562's version for
// custom layouts) in place of Curator's random version 4. The version digit
// tells a zkit member, which records its leave, from a Curator member,
// which does not.
func newMemberName() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x80 // version 8
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// isMember reports whether a child of the barrier directory is a member: a
// canonical UUID (zkit's or Curator's; layout.DoubleBarrier). "ready" and
// names of other shapes are not.
func isMember(name string) bool { return layout.DoubleBarrier.IsMember(layout.Child{Name: name}) }

// isZkit reports whether a member name is a zkit member's (version 8).
func isZkit(name string) bool { return isMember(name) && name[14] == '8' }

// roster is the data of the ready node when a zkit member created it: the
// members it counted, and the version of the directory's data at that
// moment. Each zkit member that leaves through Leave increments that
// version, in the transaction that deletes its node; the last member
// compares the two to find members that vanished instead.
type roster struct {
	Members []string `json:"members"`
	Version int32    `json:"version"`
}

// parseRoster reads a ready node's data; ok is false for data written by
// someone else (Curator writes the creating host's address).
func parseRoster(data []byte) (r roster, ok bool) {
	if json.Unmarshal(data, &r) != nil || r.Members == nil {
		return roster{}, false
	}
	return r, true
}

// zkitOthers counts the zkit members of the roster other than self.
func (r roster) zkitOthers(self string) int {
	n := 0
	for _, m := range r.Members {
		if m != self && isZkit(m) {
			n++
		}
	}
	return n
}

// outcome is what the last member of a round writes into the directory's
// data as it leaves: who it is, and how many members it found missing. A
// member that did not see the last member's release signal reads it.
type outcome struct {
	Last string `json:"last"`
	Lost int    `json:"lost"`
}

// outcomeLen is the length of the outcome of a round that lost no
// member, which checkDir takes for one without reading it.
var outcomeLen = int32(len(`{"last":"","lost":0}`) + len(newMemberName()))
