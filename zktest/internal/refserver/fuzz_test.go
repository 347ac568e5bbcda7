package refserver

import (
	"encoding/binary"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
	"github.com/zkit-dev/zkit/internal/wireclient"
)

// FuzzFrames feeds malformed, truncated and oversized input to the server,
// at the handshake and after it. The server must not panic, must close at
// most the offending connection, must leave another connection working, and
// must not leak goroutines. The seed corpus runs as a normal test.
//
//	go test ./zktest/internal/refserver -run '^$' -fuzz FuzzFrames -fuzztime 60s
func FuzzFrames(f *testing.F) {
	connect := jute.Frame(&jute.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16), HasReadOnly: true})
	create := jute.Encode(&jute.CreateRequest{Path: "/f", Data: []byte("x"), ACL: []jute.ACL{{Perms: 31, ID: jute.Id{Scheme: "world", ID: "anyone"}}}})
	multi := jute.Encode(&jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Body: &jute.CreateRequest{Path: "/m", ACL: nil}},
		{Type: jute.OpDelete, Body: &jute.DeleteRequest{Path: "/m", Version: -1}},
	}})
	// mode 0: raw bytes instead of a handshake; 1: a handshake, then one
	// well-framed request (op, body); 2: a handshake, then raw bytes.
	f.Add(uint8(0), int32(0), []byte{})
	f.Add(uint8(0), int32(0), []byte("ruok"))
	f.Add(uint8(0), int32(0), []byte("stat"))
	f.Add(uint8(0), int32(0), connect[:10])
	f.Add(uint8(0), int32(0), []byte{0x7f, 0xff, 0xff, 0xff})
	f.Add(uint8(0), int32(0), []byte{0xff, 0xff, 0xff, 0xff, 0, 0})
	f.Add(uint8(0), int32(0), []byte{0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(uint8(0), int32(0), append(append([]byte{}, connect...), 0, 0, 0, 1, 9))
	f.Add(uint8(1), jute.OpCreate, create)
	f.Add(uint8(1), jute.OpCreate, create[:7])
	f.Add(uint8(1), jute.OpCreate2, []byte{0, 0, 0, 1, '/', 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0})
	f.Add(uint8(1), jute.OpCreateTTL, create)
	f.Add(uint8(1), jute.OpMulti, multi)
	f.Add(uint8(1), jute.OpMulti, multi[:20])
	f.Add(uint8(1), jute.OpMulti, []byte{0, 0, 0, 1, 0, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff})
	f.Add(uint8(1), jute.OpMultiRead, multi)
	f.Add(uint8(1), jute.OpSetWatches, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Add(uint8(1), jute.OpSetWatches2, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Add(uint8(1), jute.OpSetACL, []byte{0, 0, 0, 1, '/', 0x7f, 0xff, 0xff, 0xff})
	f.Add(uint8(1), jute.OpAuth, []byte{0, 0, 0, 0, 0, 0, 0, 6, 'd', 'i', 'g', 'e', 's', 't', 0xff, 0xff, 0xff, 0xff})
	f.Add(uint8(1), jute.OpAddWatch, []byte{0, 0, 0, 1, '/', 0, 0, 0, 1})
	f.Add(uint8(1), jute.OpCheck, []byte{0, 0, 0, 1, '/', 0, 0, 0, 0})
	f.Add(uint8(1), jute.OpDeleteContainer, []byte("/f"))
	f.Add(uint8(1), jute.OpCreateSession, []byte{0, 0, 0, 1})
	f.Add(uint8(1), jute.OpSASL, []byte{0, 0, 0, 1})
	f.Add(uint8(1), jute.OpCloseSession, []byte{})
	f.Add(uint8(1), int32(77), []byte{1, 2, 3})
	f.Add(uint8(2), int32(0), []byte{0, 0, 0, 2, 0, 0})
	f.Add(uint8(2), int32(0), []byte{0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0})
	f.Add(uint8(2), int32(0), []byte{0, 0x10, 0, 0})

	s, err := Start("127.0.0.1:0", Config{})
	if err != nil {
		f.Fatal(err)
	}
	control, err := wireclient.Connect(s.Addr(), 30*time.Second)
	if err != nil {
		f.Fatal(err)
	}
	if _, h, err := control.Call(jute.OpExists, &jute.ExistsRequest{Path: "/watched", Watch: true}, nil); err != nil || h.Err != int32(jute.ErrNoNode) {
		f.Fatalf("control exists: %v %v", h, err)
	}
	f.Cleanup(func() {
		control.Close()
		s.Close()
		// Every goroutine of the server ends with Close.
		deadline := time.Now().Add(10 * time.Second)
		for {
			left := serverGoroutines()
			if left == "" {
				return
			}
			if time.Now().After(deadline) {
				f.Errorf("server goroutines left after Close:\n%s", left)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})

	f.Fuzz(func(t *testing.T, mode uint8, op int32, data []byte) {
		c, err := wireclient.Dial(s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		switch mode % 3 {
		case 0:
			c.WriteRaw(data)
		case 1:
			if _, err := c.Handshake(0, nil, 30*time.Second, 0); err != nil {
				t.Fatalf("handshake: %v", err)
			}
			frame := make([]byte, 12, 12+len(data))
			binary.BigEndian.PutUint32(frame, uint32(8+len(data)))
			binary.BigEndian.PutUint32(frame[4:], 1)
			binary.BigEndian.PutUint32(frame[8:], uint32(op))
			c.WriteRaw(append(frame, data...))
		case 2:
			if _, err := c.Handshake(0, nil, 30*time.Second, 0); err != nil {
				t.Fatalf("handshake: %v", err)
			}
			c.WriteRaw(data)
		}
		// Read whatever comes back for a moment, then hang up.
		for {
			if _, err := c.ReadFrame(5 * time.Millisecond); err != nil {
				break
			}
		}
		sid := c.SessionID
		c.Close()
		// The other connection is unaffected.
		if _, h, err := control.Call(jute.OpPing, nil, nil); err != nil || h.Err != 0 {
			t.Fatalf("control connection after fuzz input: %v %v", h, err)
		}
		// The fuzz connection is gone from the server (its goroutines
		// ended), and its session is closed so sessions do not pile up.
		waitFor(t, 5*time.Second, "the fuzz connection to go", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return len(s.conns) == 1
		})
		if sid != 0 {
			s.ExpireSession(sid)
		}
	})
}

// serverGoroutines returns the stacks of goroutines running the server's
// code (not the test's), or "".
func serverGoroutines() string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "internal/refserver.(*") && !strings.Contains(g, "refserver.Fuzz") && !strings.Contains(g, "refserver.Test") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
