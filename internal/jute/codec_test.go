package jute

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
)

func TestEncodingMatchesJute(t *testing.T) {
	cases := []struct {
		name string
		rec  any
		hex  string
	}{
		{"header", &RequestHeader{Xid: 1, Type: OpCreate}, "0000000100000001"},
		{"reply", &ReplyHeader{Xid: -1, Zxid: -1, Err: 0}, "ffffffffffffffffffffffff00000000"},
		{"create", &CreateRequest{Path: "/a", Data: []byte("x"), ACL: []ACL{{Perms: PermAll, ID: Id{"world", "anyone"}}}, Flags: 3},
			"000000022f61" + "0000000178" + "00000001" + "0000001f" + "00000005776f726c64" + "00000006616e796f6e65" + "00000003"},
		{"nil buffer", &GetDataResponse{}, "ffffffff" + "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"},
		{"null vector", &GetChildrenResponse{}, "ffffffff"},
		{"bool", &ExistsRequest{Path: "/", Watch: true}, "000000012f01"},
		{"connect", &ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16), HasReadOnly: true},
			"00000000" + "0000000000000000" + "00002710" + "0000000000000000" + "00000010" + "00000000000000000000000000000000" + "00"},
	}
	for _, c := range cases {
		got := hex.EncodeToString(Encode(c.rec))
		if got != c.hex {
			t.Errorf("%s: got %s, want %s", c.name, got, c.hex)
		}
	}
}

func TestRoundTripEveryOp(t *testing.T) {
	stat := Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: -6, Aversion: 7, EphemeralOwner: 8, DataLength: 9, NumChildren: 10, Pzxid: 11}
	acl := []ACL{{Perms: 31, ID: Id{"digest", "u:x"}}}
	samples := map[int32][2]any{
		OpCreate:       {&CreateRequest{"/p", []byte{}, acl, 1}, &CreateResponse{"/p"}},
		OpCreate2:      {&CreateRequest{"/p", nil, acl, 2}, &Create2Response{"/p0000000001", stat}},
		OpCreateTTL:    {&CreateTTLRequest{"/p", []byte("d"), acl, 5, 100}, &Create2Response{"/p", stat}},
		OpDelete:       {&DeleteRequest{"/p", -1}, &Empty{}},
		OpExists:       {&ExistsRequest{"/p", true}, &ExistsResponse{stat}},
		OpGetData:      {&GetDataRequest{"/p", false}, &GetDataResponse{[]byte("abc"), stat}},
		OpSetData:      {&SetDataRequest{"/p", []byte("z"), 3}, &SetDataResponse{stat}},
		OpGetACL:       {&GetACLRequest{"/p"}, &GetACLResponse{acl, stat}},
		OpSetACL:       {&SetACLRequest{"/p", acl, 0}, &SetACLResponse{stat}},
		OpGetChildren:  {&GetChildrenRequest{"/p", true}, &GetChildrenResponse{[]string{"a", "b"}}},
		OpGetChildren2: {&GetChildren2Request{"/p", false}, &GetChildren2Response{[]string{}, stat}},
		OpSync:         {&SyncRequest{"/p"}, &SyncResponse{"/p"}},
		OpCheck:        {&CheckVersionRequest{"/p", 4}, &SetDataResponse{stat}},
		OpSetWatches:   {&SetWatches{9, []string{"/a"}, []string{}, []string{"/b", "/c"}}, &Empty{}},
		OpAuth:         {&AuthPacket{0, "digest", []byte("u:p")}, &Empty{}},
		OpMulti: {&MultiRequest{Ops: []MultiOp{
			{Type: OpCreate, Body: &CreateRequest{"/m", nil, acl, 0}},
			{Type: OpCreateTTL, Body: &CreateTTLRequest{"/t", nil, acl, 5, 10}},
			{Type: OpDelete, Body: &DeleteRequest{"/m", 0}},
			{Type: OpSetData, Body: &SetDataRequest{"/m", []byte("x"), -1}},
			{Type: OpCheck, Body: &CheckVersionRequest{"/m", 1}},
		}}, &MultiResponse{Results: []MultiResult{
			{Type: OpCreate, Body: &CreateResponse{"/m"}},
			{Type: OpCreate2, Body: &Create2Response{"/t", stat}},
			{Type: OpDelete},
			{Type: OpSetData, Body: &SetDataResponse{stat}},
			{Type: OpCheck},
			{Type: OpError, Err: -2},
		}}},
	}
	for op, pair := range samples {
		for i, rec := range pair {
			var fresh any
			if i == 0 {
				fresh, _ = NewRequest(op)
			} else {
				fresh, _ = NewResponse(op)
			}
			if err := Decode(Encode(rec), fresh); err != nil {
				t.Errorf("%s[%d]: %v", OpName(op), i, err)
				continue
			}
			if m, ok := fresh.(*MultiRequest); ok {
				// Raw is each op's body as read, not part of the record.
				for j := range m.Ops {
					if want := Encode(m.Ops[j].Body); !bytes.Equal(m.Ops[j].Raw, want) {
						t.Errorf("%s op %d: Raw %x, want %x", OpName(op), j, m.Ops[j].Raw, want)
					}
					m.Ops[j].Raw = nil
				}
			}
			if !reflect.DeepEqual(rec, fresh) {
				t.Errorf("%s[%d]: round trip\n got %#v\nwant %#v", OpName(op), i, fresh, rec)
			}
		}
	}
}

func TestMalformedNeverPanics(t *testing.T) {
	good := Encode(&MultiRequest{Ops: []MultiOp{{Type: OpCreate, Body: &CreateRequest{"/m", []byte("abc"), nil, 0}}}})
	for op := range opRecords {
		for cut := 0; cut < len(good); cut++ {
			rec, _ := NewRequest(op)
			_ = Decode(good[:cut], rec)
		}
	}
	// Unreasonable lengths are errors, not allocations.
	var r GetChildrenResponse
	err := Decode([]byte{0x7f, 0xff, 0xff, 0xff}, &r)
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("got %v", err)
	}
	var s SyncRequest
	if err := Decode([]byte{0xff, 0xff, 0xff, 0xfe}, &s); !errors.Is(err, ErrMalformed) {
		t.Fatalf("negative length: got %v", err)
	}
	if err := Decode([]byte{0, 0, 0, 5, 'a'}, &s); !errors.Is(err, ErrMalformed) {
		t.Fatalf("short string: got %v", err)
	}
}

func TestFrame(t *testing.T) {
	b := Frame(&RequestHeader{Xid: 7, Type: OpPing})
	if !bytes.Equal(b, []byte{0, 0, 0, 8, 0, 0, 0, 7, 0, 0, 0, 11}) {
		t.Fatalf("%x", b)
	}
	if Error(-101).Error() != "NoNode (-101)" || OpName(14) != "multi" || OpName(999) != "op999" {
		t.Fatal(Error(-101).Error(), OpName(14))
	}
}

// The records the client's connection wrapper reads on every frame decode
// themselves (no reflection), to what the reflective encoder wrote.
func TestHandDecodedRecords(t *testing.T) {
	for _, pair := range [][2]any{
		{&GetDataRequest{"/w", true}, &GetDataRequest{}},
		{&GetDataRequest{"/", false}, &GetDataRequest{}},
		{&WatcherEvent{3, 3, "/x/y"}, &WatcherEvent{}},
		{&WatcherEvent{-1, -112, ""}, &WatcherEvent{}},
	} {
		if err := Decode(Encode(pair[0]), pair[1]); err != nil {
			t.Fatalf("%+v: %v", pair[0], err)
		}
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("decoded %+v, want %+v", pair[1], pair[0])
		}
	}
	// A null element reads as "" and is counted, as a null string is.
	d := NewDecoder([]byte{0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 'a', 0, 0, 0, 0}, 0)
	if v := d.Strings(); d.Err() != nil || !reflect.DeepEqual(v, []string{"", "a", ""}) || d.Nulls() != 1 {
		t.Errorf("vector with a null element: %q, %d nulls, %v", v, d.Nulls(), d.Err())
	}
	if err := Decode([]byte{0, 0, 0, 5, '/'}, &GetDataRequest{}); err == nil {
		t.Error("a cut-off GetDataRequest decoded without an error")
	}
}

// The hand-coded records (hot.go) write and read exactly what the
// reflective codec writes and reads, and fail on every cut-off input on
// which it fails.
func TestHandCodedMatchesReflection(t *testing.T) {
	stat := Stat{Czxid: 1, Mzxid: -2, Ctime: 3, Mtime: 4, Version: 5, Cversion: -6, Aversion: 7, EphemeralOwner: 8, DataLength: 9, NumChildren: 10, Pzxid: 1 << 40}
	acl := []ACL{{Perms: 31, ID: Id{"digest", "u:x"}}, {Perms: 1, ID: Id{"world", ""}}}
	for _, rec := range []any{
		&Id{"ip", "127.0.0.1"}, &ACL{3, Id{"x509", "CN=a"}}, &stat,
		&RequestHeader{-16, OpCreate2}, &ReplyHeader{-1, 1 << 33, -101},
		&WatcherEvent{4, 3, "/a/b"},
		&CreateRequest{"/p", []byte("d"), acl, 3}, &CreateRequest{"/p", nil, nil, 0}, &CreateRequest{"", []byte{}, []ACL{}, 1},
		&CreateResponse{"/p-0000000001"}, &Create2Response{"/p", stat},
		&DeleteRequest{"/p", -1}, &ExistsRequest{"/p", true}, &ExistsResponse{stat},
		&GetDataRequest{"/p", false}, &GetDataResponse{[]byte("abc"), stat}, &GetDataResponse{nil, stat},
		&SetDataRequest{"/p", []byte{}, 7}, &SetDataRequest{"/p", nil, -1}, &SetDataResponse{stat},
		&GetChildrenRequest{"/p", true}, &GetChildrenResponse{[]string{"a", "", "c"}}, &GetChildrenResponse{nil}, &GetChildrenResponse{[]string{}},
		&GetChildren2Request{"/", false}, &GetChildren2Response{[]string{"x"}, stat}, &GetChildren2Response{nil, stat},
		&SyncRequest{"/s"}, &SyncResponse{"/s"}, &CheckVersionRequest{"/c", 2}, &ErrorResponse{-110},
	} {
		if _, ok := rec.(Marshaler); !ok {
			t.Fatalf("%T is not hand-coded", rec)
		}
		want := reflectEncode(rec)
		if got := Encode(rec); !bytes.Equal(got, want) {
			t.Errorf("%T %+v: encoded %x, reflection %x", rec, rec, got, want)
		}
		hand := reflect.New(reflect.TypeOf(rec).Elem()).Interface()
		if err := Decode(want, hand); err != nil || !reflect.DeepEqual(hand, rec) {
			t.Errorf("%T: decoded %+v (%v), want %+v", rec, hand, err, rec)
		}
		for cut := range len(want) {
			hand := reflect.New(reflect.TypeOf(rec).Elem()).Interface()
			handErr := Decode(want[:cut], hand)
			reflErr := reflectDecode(want[:cut], reflect.TypeOf(rec).Elem())
			if (handErr == nil) != (reflErr == nil) {
				t.Errorf("%T cut at %d: hand-coded %v, reflection %v", rec, cut, handErr, reflErr)
			}
		}
	}
}

// reflectEncode encodes rec's fields with the reflective codec (nested
// records encode themselves).
func reflectEncode(rec any) []byte {
	e := NewEncoder(nil)
	v := reflect.ValueOf(rec).Elem()
	for _, i := range fieldsOf(v.Type()) {
		encodeValue(e, v.Field(i))
	}
	return e.Bytes()
}

// reflectDecode decodes b into a new record of type typ field by field
// with the reflective codec.
func reflectDecode(b []byte, typ reflect.Type) error {
	d := NewDecoder(b, 0)
	v := reflect.New(typ).Elem()
	for _, i := range fieldsOf(typ) {
		decodeValue(d, v.Field(i))
	}
	return d.Err()
}

// JavaVectors reads a negative count other than -1 as an empty vector, as
// ZooKeeper's server does, through every vector reader; by default it is
// malformed.
func TestJavaVectors(t *testing.T) {
	neg := []byte{0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 7}
	if v := NewDecoder(neg, 0).JavaVectors().Strings(); v == nil || len(v) != 0 {
		t.Errorf("Strings with count -2: %q, want an empty vector", v)
	}
	if d := NewDecoder(neg, 0); d.Strings() != nil || d.Err() == nil {
		t.Error("a count of -2 decoded without JavaVectors")
	}
	var set SetACLRequest
	body := append([]byte{0, 0, 0, 1, '/', 0x80, 0, 0, 0}, neg[4:]...)
	if err := Unmarshal(NewDecoder(body, 0).JavaVectors(), &set); err != nil || set.ACL == nil || len(set.ACL) != 0 || set.Version != 7 {
		t.Errorf("SetACLRequest with ACL count -2^31: %+v, %v", set, err)
	}
	var sw SetWatches
	body = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfd, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	if err := Unmarshal(NewDecoder(body, 0).JavaVectors(), &sw); err != nil || sw.DataWatches == nil || sw.ExistWatches != nil || sw.ChildWatches == nil {
		t.Errorf("SetWatches with counts -3, -1, 0: %+v, %v", sw, err)
	}
	if v := NewDecoder([]byte{0xff, 0xff}, 0).JavaVectors(); v.Strings() != nil || v.Err() == nil {
		t.Error("a cut-off count decoded without an error")
	}
}
