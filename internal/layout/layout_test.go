package layout

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
)

var (
	persistentLeaf = &client.Stat{}
	ephemeralLeaf  = &client.Stat{EphemeralOwner: 0x42}
	withChildren   = &client.Stat{NumChildren: 2}
	protectedID    = "_c_0c8a3f52-1d2e-4b5a-9c7d-2e4f6a8b0c1d-"
	memberUUID     = "0c8a3f52-1d2e-8b5a-9c7d-2e4f6a8b0c1d"
)

// What one child shows, by its name and, where read, its Stat and data.
func TestSee(t *testing.T) {
	instance := []byte(`{"name":"api","id":"i1","registrationTimeUTC":1}`)
	for _, c := range []struct {
		child Child
		want  Signs
		owner *Recipe
	}{
		{Child{Name: protectedID + "lock-0000000007"}, SignQueueNode, Lock},
		{Child{Name: protectedID + "__WRIT__0000000007"}, SignQueueNode, RWLock},
		{Child{Name: protectedID + "latch--000000001"}, SignQueueNode, Election}, // wrapped
		{Child{Name: protectedID + "lease-0000000007"}, SignLeaseNode, Semaphore},
		{Child{Name: protectedID + "-5-add-0000000007"}, SignDelta, Counter},
		// The last marker wins: the rest is no sequence number.
		{Child{Name: protectedID + "lock-7-add-x"}, 0, nil},
		{Child{Name: protectedID + "lock-0000000007", Stat: ephemeralLeaf}, SignQueueNode | SignEphemeralChild, Lock},
		// Unprotected, a name like a lock's may be a member's.
		{Child{Name: "lock-0000000007", Stat: ephemeralLeaf}, SignQueueNode | SignEphemeralChild | SignMember, Lock},
		{Child{Name: ReadyFlag}, SignFlag, nil},
		{Child{Name: ReadyFlag, Stat: persistentLeaf}, SignFlag, nil},
		{Child{Name: ReadyFlag, Stat: ephemeralLeaf}, SignEphemeralChild | SignMember, nil},
		{Child{Name: memberUUID, Stat: ephemeralLeaf}, SignEphemeralChild | SignMember, nil},
		{Child{Name: LeasesDir, Stat: withChildren}, SignSubdir, nil},
		{Child{Name: "i1", Stat: ephemeralLeaf, Data: instance}, SignEphemeralChild | SignMember | SignInstance, nil},
		{Child{Name: "i1", Stat: persistentLeaf, Data: instance}, SignInstance, nil},
		{Child{Name: "key", Stat: persistentLeaf, Data: []byte("8")}, 0, nil},
	} {
		got := See(c.child)
		if got.Signs != c.want || got.Owner != c.owner {
			t.Errorf("See(%q, %+v): %v of %v, want %v of %v", c.child.Name, c.child.Stat, got.Signs, got.Owner, c.want, c.owner)
		}
	}
}

// Each guard refuses what its layout refuses, and says what it saw.
func TestCheck(t *testing.T) {
	value := binary.BigEndian.AppendUint64(nil, 5)
	for _, c := range []struct {
		recipe *Recipe
		seen   Sighting
		want   string // in the error; "" for none
	}{
		{Counter, Sighting{Path: "/c", Stat: ephemeralLeaf}, "/c is an ephemeral node (session 0x42), not a counter's"},
		{Counter, Sighting{Path: "/c", Stat: withChildren, Children: names("k", protectedID+"lease-0000000001")}, "/c holds " + protectedID + "lease-0000000001, a semaphore's node, not a counter's"},
		{Counter, Sighting{Path: "/c", Stat: withChildren, Children: names(ReadyFlag, memberUUID)}, "/c holds ready beside members, a double barrier's, not a counter's"},
		{Counter, Sighting{Path: "/c", Stat: withChildren, Children: names(ReadyFlag, "workers")}, ""},
		{Counter, Sighting{Path: "/c", Stat: withChildren}, ""},
		{Barrier, Sighting{Path: "/b", Stat: withChildren}, "/b is a node with 2 children, not a barrier's"},
		{Barrier, Sighting{Path: "/b", Stat: &client.Stat{DataLength: 8}}, ""},
		{DoubleBarrier, Sighting{Path: "/d", Children: names(memberUUID, protectedID+"latch-0000000001")}, "/d holds " + protectedID + "latch-0000000001, an election's node, not a double barrier's"},
		{DoubleBarrier, Sighting{Path: "/d", Children: names(memberUUID), Data: value}, "/d holds data (8 bytes) that is no JSON"},
		{DoubleBarrier, Sighting{Path: "/d", Children: names(memberUUID), Data: []byte(`{"last":""}`)}, ""},
		{DoubleBarrier, Sighting{Path: "/d", Children: names(ReadyFlag, "workers")}, "/d holds ready beside nodes that are no double barrier member's, a configuration's"},
		{DoubleBarrier, Sighting{Path: "/d", Children: names(ReadyFlag, memberUUID, "x")}, ""},
		{Configwatch, Sighting{Path: "/k", Children: []Child{{Name: "locks", Stat: withChildren}}}, "/k holds locks, a node with 2 children, not a configuration's"},
		{Configwatch, Sighting{Path: "/k", Children: []Child{{Name: "m1", Stat: ephemeralLeaf}}}, "/k holds m1, an ephemeral node (session 0x42), not a configuration's"},
		{Configwatch, Sighting{Path: "/k", Children: []Child{{Name: ReadyFlag, Stat: persistentLeaf}}}, ""},
		{Membership, Sighting{Path: "/g", Children: []Child{{Name: ReadyFlag, Stat: persistentLeaf}}}, "/g holds ready, a double barrier's or a configuration's node, not a group's"},
		{Membership, Sighting{Path: "/g", Children: []Child{{Name: ReadyFlag, Stat: ephemeralLeaf}}}, ""},
		{Lock, Sighting{Path: "/l", Children: names(protectedID + "__READ__0000000001")}, "/l holds " + protectedID + "__READ__0000000001, a read/write lock's node, not a lock's"},
		{Lock, Sighting{Path: "/l", Children: names(protectedID+"lease-0000000001", protectedID+"-1-add-0000000001", memberUUID)}, ""},
	} {
		err := c.recipe.Check(c.seen)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s's check of %+v: %v, want none", c.recipe.Name, c.seen, err)
		case c.want != "" && (!errors.Is(err, ErrOtherRecipe) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s's check of %+v: %v, want ErrOtherRecipe saying %q", c.recipe.Name, c.seen, err, c.want)
		}
	}
}

func names(ns ...string) []Child { return Listed("", ns).Children }

// What a full look at a path shows.
func TestClassify(t *testing.T) {
	instance := []byte(`{"name":"api","id":"i1","registrationTimeUTC":1}`)
	kid := func(name string, st *client.Stat, data ...byte) Child { return Child{Name: name, Stat: st, Data: data} }
	for _, c := range []struct {
		name string
		seen Sighting
		want []*Recipe
	}{
		{"lock", Sighting{Stat: withChildren, Children: []Child{kid(protectedID+"lock-0000000001", ephemeralLeaf), kid("x", persistentLeaf)}}, []*Recipe{Lock}},
		{"election beside a lock", Sighting{Stat: withChildren, Children: []Child{kid(protectedID+"lock-0000000001", ephemeralLeaf), kid(protectedID+"latch-0000000002", ephemeralLeaf)}}, []*Recipe{Election, Lock, Membership}},
		{"counter with deltas", Sighting{Stat: withChildren, Data: []byte("12"), Children: []Child{kid(protectedID+"-3-add-0000000001", ephemeralLeaf)}}, []*Recipe{Counter, Membership}},
		{"counter", Sighting{Stat: persistentLeaf, Data: []byte("12")}, []*Recipe{Counter}},
		{"an empty node", Sighting{Stat: persistentLeaf}, []*Recipe{Counter, Barrier}},
		{"data no counter has", Sighting{Stat: persistentLeaf, Data: []byte("x")}, nil},
		{"rendezvous", Sighting{Stat: ephemeralLeaf, Data: []byte("10.0.0.1:80")}, []*Recipe{Rendezvous}},
		{"semaphore", Sighting{Stat: withChildren, Children: []Child{kid(LocksDir, persistentLeaf), kid(LeasesDir, withChildren)}}, []*Recipe{Semaphore}},
		{"double barrier", Sighting{Stat: withChildren, Children: []Child{kid(ReadyFlag, persistentLeaf), kid(memberUUID, ephemeralLeaf)}}, []*Recipe{DoubleBarrier}},
		{"ready alone", Sighting{Stat: withChildren, Children: []Child{kid(ReadyFlag, persistentLeaf)}}, []*Recipe{Configwatch}},
		{"configuration", Sighting{Stat: withChildren, Children: []Child{kid(ReadyFlag, persistentLeaf), kid("workers", persistentLeaf, '8')}}, []*Recipe{Configwatch}},
		{"keys without ready", Sighting{Stat: withChildren, Children: []Child{kid("workers", persistentLeaf, '8')}}, nil},
		{"service", Sighting{Stat: withChildren, Children: []Child{kid("i1", ephemeralLeaf, instance...)}}, []*Recipe{Discovery, Membership}},
		{"group", Sighting{Stat: withChildren, Children: []Child{kid("m1", ephemeralLeaf, 'a')}}, []*Recipe{Membership}},
	} {
		got := Classify(c.seen)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, recipeNames(got), recipeNames(c.want))
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.name, recipeNames(got), recipeNames(c.want))
			}
		}
	}
}

func recipeNames(rs []*Recipe) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// The registry is consistent: names are unique; a recipe refuses none of
// its own signs (a queue recipe refuses another's queue nodes, not its
// own); it writes only what it takes; every gap has a reason.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range All {
		if seen[r.Name] || Named(r.Name) != r {
			t.Errorf("%q: named twice, or not found by its name", r.Name)
		}
		seen[r.Name] = true
		if own := r.Refuses & r.Leaves &^ (SignPath | SignQueueNode); own != 0 {
			t.Errorf("%s refuses its own signs %v", r.Name, own)
		}
		if !r.Takes.Has(r.Writes) {
			t.Errorf("%s writes %v, which it does not take", r.Name, r.Writes&^r.Takes)
		}
		for _, first := range All {
			if first == r || first.Leaves == 0 {
				continue
			}
			if got, why := r.Beside(first); got == Gap && why == "" {
				t.Errorf("%s beside %s: a gap without a reason", r.Name, first.Name)
			}
		}
	}
}
