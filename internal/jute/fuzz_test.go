package jute

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
)

// FuzzReplies decodes arbitrary bytes as every record a client reads from a
// server: the connect response, a reply's header, each opcode's response
// body, and a watch event. Whatever the bytes, decoding ends with a record
// or an error, never a panic (a length larger than what is left fails
// before anything is allocated for it). A record that decodes is in its
// canonical form once encoded: it decodes again to the same bytes.
func FuzzReplies(f *testing.F) {
	ops := make([]int32, 0, len(opRecords))
	for op := range opRecords {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	f.Add(uint8(0), Encode(&ConnectResponse{TimeOut: 4000, SessionID: 1, Passwd: make([]byte, 16)}))
	f.Add(uint8(1), Encode(&ReplyHeader{Xid: 1, Zxid: 2}))
	f.Add(uint8(2), Encode(&WatcherEvent{Type: 1, State: 3, Path: "/a"}))
	f.Add(uint8(3), Encode(&GetChildren2Response{Children: []string{"a", "b"}}))
	f.Add(uint8(3), []byte{0x7f, 0xff, 0xff, 0xff}) // a length of 2 GiB
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		records := []any{&ConnectResponse{}, &ReplyHeader{}, &WatcherEvent{}}
		for _, op := range ops {
			rec, _ := NewResponse(op)
			records = append(records, rec)
		}
		rec := records[int(kind)%len(records)]
		if Decode(b, rec) != nil {
			return
		}
		once := Encode(rec)
		again := reflect.New(reflect.TypeOf(rec).Elem()).Interface()
		if err := Decode(once, again); err != nil {
			t.Fatalf("%T encoded as %x does not decode: %v", rec, once, err)
		}
		if twice := Encode(again); !bytes.Equal(once, twice) {
			t.Fatalf("%T: encoded %x, decoded and encoded again %x", rec, once, twice)
		}
	})
}
