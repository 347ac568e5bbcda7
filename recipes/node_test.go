package recipes

import (
	"reflect"
	"testing"

	"github.com/zkit-dev/zkit/client"
)

var (
	mutex = Kind{Marker: "lock-", Exclusive: true}
	read  = Kind{Marker: "__READ__"}
	write = Kind{Marker: "__WRIT__", Exclusive: true}
)

func TestParseNode(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int64
		kind Kind
		ok   bool
	}{
		{"_c_0f8b2f0e-7a2c-4d2e-9c1e-3b1c2d3e4f50-lock-0000000042", 42, mutex, true},
		{"lock-0000000007", 7, mutex, true},
		{"_c_8b0a5e0c6f4d4b8e9a7c6b5a4d3c2b1a-lock-0000000001", 1, mutex, true}, // go-zookeeper
		{"_c_x-lock-lock-0000000003", 3, mutex, true},
		{"_c_0f8b2f0e-7a2c-4d2e-9c1e-3b1c2d3e4f50-__READ__0000000010", 10, read, true},
		{"_c_0f8b2f0e-7a2c-4d2e-9c1e-3b1c2d3e4f50-__WRIT__0000000011", 11, write, true},
		{"lock-", 0, Kind{}, false},
		{"lock-12x", 0, Kind{}, false},
		{"lock-0000000001-extra", 0, Kind{}, false},
		{"readme", 0, Kind{}, false},
		// A wrapped counter, as ZooKeeper writes it ("%010d" of an int32),
		// and nothing else that starts with a minus.
		{"lock--000000001", -1, mutex, true},
		{"_c_x-lock--2147483648", -2147483648, mutex, true},
		{"_c_x-__READ__-999999999", -999999999, read, true},
		{"lock--1", 0, Kind{}, false},
		{"lock--0000000001", 0, Kind{}, false},
		{"lock--000000000", 0, Kind{}, false},
		{"lock--2147483649", 0, Kind{}, false},
		{"lock---000000001", 0, Kind{}, false},
		{"lock--", 0, Kind{}, false},
		{"lock-+000000001", 0, Kind{}, false},
		{"latch-0000000001", 0, Kind{}, false},
		{"lock-99999999999999999999", 0, Kind{}, false},
		// 19 digits past MaxInt64 must not wrap around to a negative
		// sequence number, which would block every waiter.
		{"x-lock-9999999999999999999", 0, Kind{}, false},
		{"x-lock-9223372036854775808", 0, Kind{}, false},
		{"x-lock-9223372036854775807", 9223372036854775807, mutex, true},
	} {
		n, ok := ParseNode(tc.name, mutex, read, write)
		if ok != tc.ok || (ok && (n.Seq != tc.seq || n.Kind != tc.kind || n.Name != tc.name)) {
			t.Errorf("ParseNode(%q) = %+v, %v; want seq %d kind %+v ok %v", tc.name, n, ok, tc.seq, tc.kind, tc.ok)
		}
	}
}

func TestSortNodesBySequenceNotName(t *testing.T) {
	got := SortNodes([]string{
		"_c_ffff-lock-0000000003",
		"other",
		"_c_aaaa-lock-0000000010",
		"_c_0000-lock-0000000002",
		"lock-0000000001",
		"_c_zzzz-lock-x",
	}, mutex)
	var names []string
	for _, n := range got {
		names = append(names, n.Name)
	}
	want := []string{"lock-0000000001", "_c_0000-lock-0000000002", "_c_ffff-lock-0000000003", "_c_aaaa-lock-0000000010"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("SortNodes = %v, want %v", names, want)
	}
}

// Once the directory's counter has wrapped, nodes stay in creation order:
// a wrapped counter's nodes ("-2147483648" first, "-000000001" last) come
// after every other. Curator's order (the suffixes compared as strings)
// would put each new node first, so that every newcomer held at once.
func TestSortNodesWrappedCounterInCreationOrder(t *testing.T) {
	children := []string{
		"_c_a-lock-2147483647", "_c_b-lock--2147483648", "_c_c-lock--2147483647",
		"_c_d-lock-2147483646", "_c_e-lock--000000001", "_c_f-lock-0000000001",
		"_c_g-lock--1000000000", "_c_h-lock--999999999", "_c_i-lock--000000002",
		"_c_j-lock-0000000000",
	}
	var names []string
	for _, n := range SortNodes(children, mutex) {
		names = append(names, n.Name)
	}
	want := []string{
		"_c_j-lock-0000000000", "_c_f-lock-0000000001", "_c_d-lock-2147483646",
		"_c_a-lock-2147483647", "_c_b-lock--2147483648", "_c_c-lock--2147483647",
		"_c_g-lock--1000000000", "_c_h-lock--999999999", "_c_i-lock--000000002",
		"_c_e-lock--000000001",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("SortNodes = %v, want creation order %v", names, want)
	}
	// The first node after the wrap waits for every node before it and
	// watches the last of them; the first node of all waits for none.
	self, _ := ParseNode("_c_b-lock--2147483648", mutex)
	tk := &Ticket{q: &Queue{kinds: []Kind{mutex}}, node: self}
	if err := tk.place(children); err != nil {
		t.Fatal(err)
	}
	if h := tk.highest(); len(tk.known) != 4 || h.Name != "_c_a-lock-2147483647" {
		t.Fatalf("%s waits for %v, watching %s; want the 4 nodes before it, watching _c_a-lock-2147483647", self.Name, tk.known, h.Name)
	}
	first, _ := ParseNode("_c_j-lock-0000000000", mutex)
	tk = &Ticket{q: &Queue{kinds: []Kind{mutex}}, node: first}
	if err := tk.place(children); err != nil || len(tk.known) != 0 {
		t.Fatalf("the first node created waits for %v (%v)", tk.known, err)
	}
}

// Created orders a wrapped counter's nodes after the ones made before the
// wrap, as they were created.
func TestCreatedAfterWrap(t *testing.T) {
	var got []int64
	for _, seq := range []int64{0, 2147483647, -2147483648, -2147483647, -1} {
		got = append(got, Node{Seq: seq}.Created())
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("Created = %v, want increasing in creation order", got)
		}
	}
}

func TestBlocks(t *testing.T) {
	r1 := Node{Seq: 1, Kind: read}
	r2 := Node{Seq: 2, Kind: read}
	w3 := Node{Seq: 3, Kind: write}
	r4 := Node{Seq: 4, Kind: read}
	for _, tc := range []struct {
		a, b Node
		want bool
	}{
		{r1, r2, false}, // readers share
		{r2, w3, true},  // a writer waits for lower readers
		{w3, r4, true},  // a reader waits for lower writers
		{r1, r4, false},
		{w3, r2, false}, // higher nodes never block lower ones
		{Node{Seq: 1, Kind: mutex}, Node{Seq: 2, Kind: mutex}, true},
		// A wrapped counter: creation order (see Node.Before).
		{Node{Seq: -1, Kind: mutex}, Node{Seq: 0, Kind: mutex}, false},
		{Node{Seq: 0, Kind: mutex}, Node{Seq: -1, Kind: mutex}, true},
		{Node{Seq: 2147483647, Kind: mutex}, Node{Seq: -2147483648, Kind: mutex}, true},
		{Node{Seq: -1, Kind: mutex}, Node{Seq: -2, Kind: mutex}, false},
		{Node{Seq: -2147483648, Kind: mutex}, Node{Seq: -999999999, Kind: mutex}, true},
		{Node{Seq: -1000000000, Kind: mutex}, Node{Seq: -999999999, Kind: mutex}, true},
		{Node{Seq: -999999999, Kind: mutex}, Node{Seq: -1000000000, Kind: mutex}, false},
	} {
		if got := tc.a.Blocks(tc.b); got != tc.want {
			t.Errorf("%+v.Blocks(%+v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestReleasedDropsWhatTheHolderWaitedFor(t *testing.T) {
	self := Node{Name: "w9", Seq: 9, Kind: write}
	r1 := Node{Name: "r1", Seq: 1, Kind: read}
	w2 := Node{Name: "w2", Seq: 2, Kind: write}
	r3 := Node{Name: "r3", Seq: 3, Kind: read}
	r4 := Node{Name: "r4", Seq: 4, Kind: read}
	tk := &Ticket{node: self, known: []Node{r1, w2, r3, r4}}
	// r4 held: every writer below it is gone, other readers may hold.
	tk.released(r4)
	if want := []Node{r1, r3}; !reflect.DeepEqual(tk.known, want) {
		t.Fatalf("after reader r4 released: %v, want %v", tk.known, want)
	}
	tk.known = []Node{r1, w2, r3, r4, {Name: "w5", Seq: 5, Kind: write}}
	tk.released(tk.known[4])
	if len(tk.known) != 0 {
		t.Fatalf("after writer w5 released: %v, want nothing", tk.known)
	}
}

func TestBackoff(t *testing.T) {
	var b client.Backoff
	prev := b.Next()
	if prev < 7_500_000 || prev > 12_500_000 {
		t.Fatalf("first delay %v", prev)
	}
	for i := 0; i < 20; i++ {
		d := b.Next()
		if d > 1250_000_000 {
			t.Fatalf("delay %v over the cap", d)
		}
	}
	b.Reset()
	if d := b.Next(); d > 12_500_000 {
		t.Fatalf("after Reset: %v", d)
	}
}
