package refserver

import (
	"encoding/binary"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
	"github.com/zkit-dev/zkit/internal/wireclient"
)

// goroutinesIn counts the goroutines in the server's function fn, as
// "(*conn).readFrame(".
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "refserver."+fn)
}

func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// A frame's declared length costs memory only as its bytes arrive: 40
// connections that each declare a 1 MB frame and send 100 bytes of it hold
// a few megabytes, not 40.
func TestDeclaredFrameCostsLittle(t *testing.T) {
	s := startTest(t, Config{})
	before := heapInUse()
	for range 40 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.Write(binary.BigEndian.AppendUint32(nil, 0xfffff))
		c.Write(make([]byte, 100))
	}
	waitFor(t, 10*time.Second, "40 connections reading their frame", func() bool { return goroutinesIn("(*conn).readFrame(") == 40 })
	if grown := heapInUse() - before; grown > 16<<20 {
		t.Errorf("40 declared 1 MB frames hold %d MB of heap", grown>>20)
	}
}

// A client that sends requests and never reads the replies stops being
// read once a few megabytes wait for it: the server's memory stays flat,
// other sessions are served, and the replies all come once the client
// reads.
func TestNonReadingClientStopsBeingRead(t *testing.T) {
	s := startTest(t, Config{})
	ctl, err := wireclient.Connect(s.Addr(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	big := &jute.CreateRequest{Path: "/big", Data: make([]byte, 1_000_000), ACL: openACL}
	if _, h, err := ctl.Call(jute.OpCreate, big, nil); err != nil || h.Err != 0 {
		t.Fatalf("create /big: %v %v", h, err)
	}
	before := heapInUse()
	bad, err := wireclient.Connect(s.Addr(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	const n = 40
	var reqs []byte
	for i := range n {
		reqs = append(reqs, jute.Frame(&jute.RequestHeader{Xid: int32(i + 1), Type: jute.OpGetData}, &jute.GetDataRequest{Path: "/big"})...)
	}
	go bad.WriteRaw(reqs)
	waitFor(t, 10*time.Second, "the server to stop reading the client", func() bool { return goroutinesIn("(*conn).waitForWriter(") == 1 })
	if grown := heapInUse() - before; grown > 24<<20 {
		t.Errorf("the server holds %d MB for a client that does not read", grown>>20)
	}
	if _, h, err := ctl.Call(jute.OpPing, nil, nil); err != nil || h.Err != 0 {
		t.Fatalf("another session's ping: %v %v", h, err)
	}
	for i := range n {
		f, err := bad.Next(10 * time.Second)
		if err != nil || f.Header.Xid != int32(i+1) || len(f.Body) < 1_000_000 {
			t.Fatalf("reply %d of %d once read: xid %d, %d bytes, %v", i+1, n, f.Header.Xid, len(f.Body), err)
		}
	}
}

// Watch events are queued whatever the reader does; a connection that lets
// them pile up past its bound is closed, and its session lives on.
func TestUnreadEventsCloseTheConnection(t *testing.T) {
	s := startTest(t, Config{outputLimit: 16 << 10}) // closed past 256 KB
	ctl, err := wireclient.Connect(s.Addr(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	node := "/w/" + strings.Repeat("x", 1000)
	for _, p := range []string{"/w", node} {
		if _, h, err := ctl.Call(jute.OpCreate, &jute.CreateRequest{Path: p, ACL: openACL}, nil); err != nil || h.Err != 0 {
			t.Fatalf("create %s: %v %v", p, h, err)
		}
	}
	w, err := wireclient.Connect(s.Addr(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, h, err := w.Call(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/w", Mode: jute.AddWatchPersistentRecursive}, nil); err != nil || h.Err != 0 {
		t.Fatalf("addWatch: %v %v", h, err)
	}
	// Hold every frame back for a while, so that the watcher's events
	// (300 of about 1 KB) queue up, however fast it would read them.
	s.SetLatency(2 * time.Second)
	var ops []jute.MultiOp
	for range 300 {
		ops = append(ops, jute.MultiOp{Type: jute.OpSetData, Body: &jute.SetDataRequest{Path: node, Version: -1}})
	}
	xid, err := ctl.Send(jute.OpMulti, &jute.MultiRequest{Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	if frames, err := w.WaitClosed(time.Second); err != nil {
		t.Fatalf("the watcher's connection is still open (%d frames)", len(frames))
	}
	if _, h, err := ctl.Await(xid, nil, 10*time.Second); err != nil || h.Err != 0 {
		t.Fatalf("the writer's multi: %v %v", h, err)
	}
	s.SetLatency(0)
	again, err := wireclient.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if rsp, err := again.Handshake(w.SessionID, w.Passwd, 30*time.Second, 0); err != nil || rsp.SessionID != w.SessionID {
		t.Fatalf("the watcher's session after its connection closed: %+v %v", rsp, err)
	}
}
