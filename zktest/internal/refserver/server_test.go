package refserver

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkit-dev/zkit/internal/jute"
	"github.com/zkit-dev/zkit/internal/wireclient"
)

func fourLetter(t *testing.T, addr, cmd string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte(cmd))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return string(b)
}

func TestFourLetterWords(t *testing.T) {
	s := startTest(t, Config{})
	c, _ := zkConnect(t, s.Addr())
	if _, err := c.Create("/e", []byte("abc"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW("/e"); err != nil {
		t.Fatal(err)
	}
	if got := fourLetter(t, s.Addr(), "ruok"); got != "imok" {
		t.Fatalf("ruok: %q", got)
	}
	// The server may still be closing ruok's connection: it counts until
	// then.
	var mntr string
	waitFor(t, 10*time.Second, "ruok's connection to close", func() bool {
		mntr = fourLetter(t, s.Addr(), "mntr")
		return strings.Contains(mntr, "zk_num_alive_connections\t2")
	})
	for _, want := range []string{"zk_server_state\tstandalone", "zk_znode_count\t6", "zk_ephemerals_count\t1",
		"zk_watch_count\t1", "zk_num_alive_connections\t2", "zk_packets_received\t", "zk_packets_sent\t"} {
		if !strings.Contains(mntr, want) {
			t.Errorf("mntr lacks %q:\n%s", want, mntr)
		}
	}
	// go-zookeeper's parsers accept our srvr and cons.
	stats, ok := zk.FLWSrvr([]string{s.Addr()}, 5*time.Second)
	if !ok || stats[0].Mode != zk.ModeStandalone || stats[0].NodeCount != 6 {
		t.Fatalf("FLWSrvr: %+v %v", stats[0], ok)
	}
	// (Like ZooKeeper's, our cons lists the asking connection without a
	// session, a line FLWCons cannot parse; it still parses the rest.)
	clients, _ := zk.FLWCons([]string{s.Addr()}, 5*time.Second)
	found := false
	for _, cl := range clients[0].Clients {
		found = found || cl.SessionID == c.SessionID()
	}
	if !found {
		t.Fatalf("FLWCons did not find session %x: %+v", c.SessionID(), clients[0])
	}
	for _, cmd := range []string{"stat", "conf", "envi", "wchs", "wchc", "wchp", "dump", "isro", "dirs", "srst", "crst", "gtmk", "hash"} {
		if out := fourLetter(t, s.Addr(), cmd); cmd != "hash" && out == "" {
			t.Errorf("%s: empty", cmd)
		}
	}
	if !strings.Contains(fourLetter(t, s.Addr(), "dump"), "\t/e\n") {
		t.Error("dump does not list the ephemeral")
	}
}

func TestSessionExpiresInRealTime(t *testing.T) {
	s := startTest(t, Config{TickTime: 20 * time.Millisecond})
	a, err := wireclient.Connect(s.Addr(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Timeout != 100 {
		t.Fatalf("negotiated %d, want 100", a.Timeout)
	}
	id := a.SessionID
	waitFor(t, 5*time.Second, "the silent session to expire", func() bool { return len(s.Sessions()) == 0 })
	if _, err := a.WaitClosed(5 * time.Second); err != nil {
		t.Fatalf("connection of expired session: %v", err)
	}
	r, err := wireclient.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if rsp, err := r.Handshake(id, a.Passwd, time.Second, 0); err != nil || rsp.SessionID != 0 || rsp.TimeOut != 0 {
		t.Fatalf("reconnect to expired session: %+v %v", rsp, err)
	}
}

func TestPingKeepsSessionAlive(t *testing.T) {
	s := startTest(t, Config{TickTime: 20 * time.Millisecond})
	a, err := wireclient.Connect(s.Addr(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i := 0; i < 20; i++ {
		if _, h, err := a.Call(jute.OpPing, nil, nil); err != nil || h.Xid != jute.XidPing {
			t.Fatalf("ping %d: %+v %v", i, h, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(s.Sessions()) != 1 {
		t.Fatal("pinging session expired")
	}
}

func TestFastForwardAgesOnlyUnreachableSessions(t *testing.T) {
	s := startTest(t, Config{})
	live, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	gone, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	gone.Call(jute.OpCreate, &jute.CreateRequest{Path: "/eph", ACL: openACL, Flags: jute.FlagEphemeral}, nil)
	live.Call(jute.OpExists, &jute.ExistsRequest{Path: "/eph", Watch: true}, nil)
	gone.Close()
	waitFor(t, 5*time.Second, "the closed connection to be noticed", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.sessions[gone.SessionID].conn == nil
	})
	s.FastForward(5 * time.Second)
	if len(s.Sessions()) != 2 {
		t.Fatal("session expired before its timeout")
	}
	s.FastForward(7 * time.Second) // past the timeout and the tick it rounds up to
	if ids := s.Sessions(); len(ids) != 1 || ids[0] != live.SessionID {
		t.Fatalf("sessions %v: want only the connected one", ids)
	}
	evs, err := live.Events(1, 5*time.Second)
	if err != nil || evs[0].Type != jute.EventNodeDeleted || evs[0].Path != "/eph" {
		t.Fatalf("watcher: %+v %v", evs, err)
	}
}

func TestPauseBlackholesAndResumeDelivers(t *testing.T) {
	s := startTest(t, Config{})
	a, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s.Pause()
	xid, _ := a.Send(jute.OpCreate, &jute.CreateRequest{Path: "/p", ACL: openACL})
	if _, _, err := a.Await(xid, nil, 200*time.Millisecond); err == nil {
		t.Fatal("paused server answered")
	}
	// New connections are accepted but get no handshake.
	b, err := wireclient.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.WriteRaw(jute.Frame(&jute.ConnectRequest{TimeOut: 5000, Passwd: make([]byte, 16)}))
	if _, err := b.ReadFrame(200 * time.Millisecond); err == nil {
		t.Fatal("paused server completed a handshake")
	}
	s.Resume()
	if _, h, err := a.Await(xid, nil, 5*time.Second); err != nil || h.Err != 0 {
		t.Fatalf("after Resume: %+v %v", h, err)
	}
	if _, err := b.ReadFrame(5 * time.Second); err != nil {
		t.Fatalf("handshake after Resume: %v", err)
	}
}

func TestLatencyKeepsOrder(t *testing.T) {
	s := startTest(t, Config{})
	a, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s.SetLatency(100 * time.Millisecond)
	start := time.Now()
	var xids []int32
	for i := 0; i < 5; i++ {
		xid, _ := a.Send(jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/l%d", i), ACL: openACL})
		xids = append(xids, xid)
	}
	for _, xid := range xids {
		if _, _, err := a.Await(xid, nil, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// Pipelined requests are each delayed, not one after the other.
	if d := time.Since(start); d < 100*time.Millisecond || d > 450*time.Millisecond {
		t.Fatalf("5 pipelined replies took %v with 100ms latency", d)
	}
}

func TestDropReplyAfterCommit(t *testing.T) {
	s := startTest(t, Config{})
	a, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var mu sync.Mutex
	var seen []string
	s.DropReplyAfterCommit(func(op, path string) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, op+" "+path)
		return op == "multi"
	})
	a.Call(jute.OpCreate, &jute.CreateRequest{Path: "/x", ACL: openACL}, nil)
	_, _, err = a.Call(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Body: &jute.CreateRequest{Path: "/m", ACL: openACL}},
	}}, nil)
	if err != wireclient.ErrClosed {
		t.Fatalf("multi: want the connection closed before the reply, got %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "create /x,multi /m" {
		t.Fatalf("match saw %q", seen)
	}
	b, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, h, _ := b.Call(jute.OpExists, &jute.ExistsRequest{Path: "/m"}, nil); h.Err != 0 {
		t.Fatal("the multi was not applied")
	}
	// One-shot: the next multi gets its reply.
	if _, h, err := b.Call(jute.OpMulti, &jute.MultiRequest{}, nil); err != nil || h.Err != 0 {
		t.Fatalf("second multi: %+v %v", h, err)
	}
}

func TestRestartKeepsSessionsAndData(t *testing.T) {
	s := startTest(t, Config{})
	a, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	a.Call(jute.OpCreate, &jute.CreateRequest{Path: "/e", ACL: openACL, Flags: jute.FlagEphemeral}, nil)
	zxid := s.Zxid()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitClosed(5 * time.Second); err != nil {
		t.Fatal("connection survived the restart")
	}
	b, err := wireclient.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rsp, err := b.Handshake(a.SessionID, a.Passwd, 10*time.Second, zxid)
	if err != nil || rsp.SessionID != a.SessionID {
		t.Fatalf("resume after restart: %+v %v", rsp, err)
	}
	if _, h, _ := b.Call(jute.OpExists, &jute.ExistsRequest{Path: "/e"}, nil); h.Err != 0 || h.Zxid != zxid {
		t.Fatalf("after restart: %+v (zxid before %d)", h, zxid)
	}
}

func TestTTLAndContainerReapedByFastForward(t *testing.T) {
	s := startTest(t, Config{})
	a, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Call(jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/ttl", ACL: openACL, Flags: jute.FlagPersistentWithTTL, TTL: 5000}, nil)
	a.Call(jute.OpCreateContainer, &jute.CreateRequest{Path: "/box", ACL: openACL, Flags: jute.FlagContainer}, nil)
	a.Call(jute.OpCreateContainer, &jute.CreateRequest{Path: "/never", ACL: openACL, Flags: jute.FlagContainer}, nil)
	a.Call(jute.OpCreate, &jute.CreateRequest{Path: "/box/c", ACL: openACL}, nil)
	a.Call(jute.OpDelete, &jute.DeleteRequest{Path: "/box/c", Version: -1}, nil)
	a.Call(jute.OpExists, &jute.ExistsRequest{Path: "/ttl", Watch: true}, nil)
	exists := func(p string) bool {
		_, h, err := a.Call(jute.OpExists, &jute.ExistsRequest{Path: p}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return h.Err == 0
	}
	s.FastForward(time.Second)
	if exists("/box") || !exists("/ttl") || !exists("/never") {
		t.Fatal("after 1s: want /box reaped, /ttl and /never kept")
	}
	s.FastForward(5 * time.Second)
	if exists("/ttl") {
		t.Fatal("TTL node outlived its TTL")
	}
	if !exists("/never") {
		t.Fatal("a never-used container was reaped")
	}
	if len(a.Passwd) == 0 || len(s.Sessions()) != 1 {
		t.Fatal("the connected session did not survive FastForward")
	}
}

func TestWatchesSurviveReconnectWithGoZookeeper(t *testing.T) {
	s := startTest(t, Config{})
	c, _ := zkConnect(t, s.Addr())
	writer, _ := zkConnect(t, s.Addr())
	if _, err := c.Create("/w", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, _, ch, err := c.GetW("/w")
	if err != nil {
		t.Fatal(err)
	}
	// Drop c's connection and change the node while c reconnects
	// (go-zookeeper waits a second): the watch is re-set with setWatches
	// and fires at once because the node changed after the client's
	// last zxid.
	s.mu.Lock()
	var victim *conn
	for cn := range s.conns {
		if cn.session != nil && cn.session.id == c.SessionID() {
			victim = cn
		}
	}
	victim.abort()
	s.mu.Unlock()
	if _, err := writer.Set("/w", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev.Type != zk.EventNodeDataChanged {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch lost across a reconnect")
	}
}

// TestConcurrentClients runs many sessions doing everything at once (under
// -race) and checks the tree ends consistent.
func TestConcurrentClients(t *testing.T) {
	s := startTest(t, Config{})
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := wireclient.Connect(s.Addr(), 10*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for j := 0; j < 50; j++ {
				p := fmt.Sprintf("/c%d-%d", i, j)
				var cr jute.CreateResponse
				if _, h, err := c.Call(jute.OpCreate, &jute.CreateRequest{Path: p, ACL: openACL, Flags: jute.FlagEphemeral}, &cr); err != nil || h.Err != 0 {
					errs <- fmt.Errorf("create %s: %v %v", p, h, err)
					return
				}
				c.Call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/", Watch: true}, nil)
				c.Call(jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte("d"), Version: 0}, nil)
				c.Call(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
					{Type: jute.OpCheck, Body: &jute.CheckVersionRequest{Path: p, Version: 1}},
					{Type: jute.OpDelete, Body: &jute.DeleteRequest{Path: p, Version: 1}},
				}}, nil)
				if j%10 == 0 {
					fourLetterNoT(s.Addr(), "mntr")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.nodes) != 5 || len(s.nodes["/"].children) != 1 {
		t.Fatalf("tree not back to empty: %d nodes", len(s.nodes))
	}
	for _, ss := range s.sessions {
		if len(ss.ephemerals) != 0 {
			t.Fatal("ephemeral bookkeeping leaked")
		}
	}
}

func fourLetterNoT(addr, cmd string) string {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte(cmd))
	b, _ := io.ReadAll(c)
	return string(b)
}

// Without persistent watches, addWatch gets Unimplemented and the
// connection is closed, as from ZooKeeper before 3.6; the session lives on.
func TestDisablePersistentWatches(t *testing.T) {
	s := startTest(t, Config{DisablePersistentWatches: true})
	c, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, h, err := c.Call(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/", Mode: jute.AddWatchPersistentRecursive}, nil)
	if err != nil || jute.Error(h.Err) != jute.ErrUnimplemented {
		t.Fatalf("addWatch: %v, header %+v", err, h)
	}
	if _, err := c.WaitClosed(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if sessions := s.Sessions(); len(sessions) != 1 || sessions[0] != c.SessionID {
		t.Fatalf("sessions %x, want the client's", sessions)
	}
}

// A client that stops reading its connection holds nobody else up: what
// the server sends it (replies and watch events) queues for it while other
// sessions write on.
func TestSlowReaderDoesNotStallWriters(t *testing.T) {
	s := startTest(t, Config{})
	w, err := wireclient.Connect(s.Addr(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	open := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	for _, p := range []string{"/n", "/big"} {
		if _, h, err := w.Call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: make([]byte, 256<<10), ACL: open}, nil); err != nil || h.Err != 0 {
			t.Fatalf("create %s: %v, header %+v", p, err, h)
		}
	}
	slow, err := wireclient.Connect(s.Addr(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, h, err := slow.Call(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/", Mode: jute.AddWatchPersistentRecursive}, nil); err != nil || h.Err != 0 {
		t.Fatalf("addWatch: %v, header %+v", err, h)
	}
	// slow asks for far more than socket buffers hold, and reads nothing.
	for range 64 {
		if _, err := slow.Send(jute.OpGetData, &jute.GetDataRequest{Path: "/big"}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for i := range 300 {
		if _, h, err := w.Call(jute.OpSetData, &jute.SetDataRequest{Path: "/n", Data: []byte{byte(i)}, Version: -1}, nil); err != nil || h.Err != 0 {
			t.Fatalf("set %d: %v, header %+v", i, err, h)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("300 writes took %v beside a client that does not read", d)
	}
}

// With WatchEventZxids a watch event's reply header carries the zxid of
// the transaction that fired it, as ZooKeeper 3.9's does; an event fired
// by setWatches carries -1. (By default every event carries -1, as
// ZooKeeper 3.8's: the conformance scenario watch-event-zxid.)
func TestWatchEventZxids(t *testing.T) {
	s := startTest(t, Config{WatchEventZxids: true})
	a, err := wireclient.Connect(s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// call sends a request and reads until its reply: the events before
	// it (a write's own come first), and the reply's zxid.
	call := func(op int32, req any) (events []wireclient.Frame, zxid int64) {
		t.Helper()
		xid, err := a.Send(op, req)
		for err == nil {
			var f wireclient.Frame
			if f, err = a.Next(5 * time.Second); err == nil && f.Event != nil {
				events = append(events, f)
			} else if err == nil && f.Header.Xid == xid {
				return events, f.Header.Zxid
			}
		}
		t.Fatalf("%s: %v", jute.OpName(op), err)
		return nil, 0
	}
	check := func(events []wireclient.Frame, typ int32, zxid int64) {
		t.Helper()
		if len(events) != 1 || events[0].Event.Type != typ || events[0].Header.Zxid != zxid {
			t.Fatalf("events %+v, want one of type %d with zxid %d", events, typ, zxid)
		}
	}
	call(jute.OpExists, &jute.ExistsRequest{Path: "/n", Watch: true})
	events, zxid := call(jute.OpCreate, &jute.CreateRequest{Path: "/n", ACL: openACL})
	check(events, jute.EventNodeCreated, zxid)
	call(jute.OpGetData, &jute.GetDataRequest{Path: "/n", Watch: true})
	events, zxid = call(jute.OpSetData, &jute.SetDataRequest{Path: "/n", Data: []byte("1"), Version: -1})
	check(events, jute.EventNodeDataChanged, zxid)
	call(jute.OpGetData, &jute.GetDataRequest{Path: "/n", Watch: true})
	events, zxid = call(jute.OpDelete, &jute.DeleteRequest{Path: "/n", Version: -1})
	check(events, jute.EventNodeDeleted, zxid)
	events, _ = call(jute.OpSetWatches, &jute.SetWatches{RelativeZxid: 1, DataWatches: []string{"/n"},
		ExistWatches: []string{}, ChildWatches: []string{}})
	check(events, jute.EventNodeDeleted, -1)
}
