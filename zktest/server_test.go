package zktest_test

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// connectRef opens a zkit client on a reference server.
func connectRef(t *testing.T, srv *zktest.Server, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(10*time.Second))
	defer cancel()
	opts = append([]client.Option{client.WithSessionTimeout(4 * time.Second)}, opts...)
	c, err := client.Connect(ctx, srv.Servers(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(20*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or the scaled deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(10 * time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestServerBasics(t *testing.T) {
	srv := zktest.NewServer(t)
	c := connectRef(t, srv)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/a", []byte("v1"), client.Persistent); err != nil {
		t.Fatal(err)
	}
	data, st, err := c.Get(ctx, "/a")
	if err != nil || string(data) != "v1" || st.Version != 0 || st.Czxid == 0 {
		t.Fatalf("get: %q %+v %v", data, st, err)
	}
	if got := srv.Sessions(); !slices.Equal(got, []int64{c.Session().ID()}) {
		t.Fatalf("sessions %v, want [%d]", got, c.Session().ID())
	}
	if srv.Zxid() < st.Czxid {
		t.Fatalf("server zxid %d behind node czxid %d", srv.Zxid(), st.Czxid)
	}
	// The connect string and the dialer reach the same server.
	if got := srv.Servers(); len(got) != 1 || got[0] != srv.Addr() {
		t.Fatalf("servers %v, addr %s", got, srv.Addr())
	}
	nc, err := srv.Dialer()("tcp", "unused:1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}

func TestServerExpireSession(t *testing.T) {
	srv := zktest.NewServer(t)
	c := connectRef(t, srv)
	watcher := connectRef(t, srv)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/e", nil, client.Ephemeral); err != nil {
		t.Fatal(err)
	}
	ok, _, ch, err := watcher.ExistsW(ctx, "/e")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	sess := c.Session()
	if !srv.ExpireSession(sess.ID()) {
		t.Fatal("ExpireSession: session not found")
	}
	if srv.ExpireSession(sess.ID()) {
		t.Fatal("ExpireSession twice: want false")
	}
	select {
	case ev := <-ch:
		if ev.Type != client.EventNodeDeleted || ev.Path != "/e" {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(zktest.Scale(10 * time.Second)):
		t.Fatal("no NodeDeleted for the expired session's ephemeral")
	}
	select {
	case <-sess.Done():
	case <-time.After(zktest.Scale(10 * time.Second)):
		t.Fatal("client did not learn its session expired")
	}
}

func TestServerFastForwardExpiresSessions(t *testing.T) {
	srv := zktest.NewServer(t, zktest.ServerTickTime(100*time.Millisecond))
	c := connectRef(t, srv, client.WithSessionTimeout(time.Second))
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/e", nil, client.Ephemeral); err != nil {
		t.Fatal(err)
	}
	id := c.Session().ID()
	// A connected client pings through the skipped time: it keeps its
	// session.
	srv.FastForward(time.Hour)
	if !slices.Contains(srv.Sessions(), id) {
		t.Fatal("a connected session expired on FastForward")
	}
	// A client that cannot reach the server does not.
	srv.Pause()
	srv.FastForward(500 * time.Millisecond) // within the timeout
	if !slices.Contains(srv.Sessions(), id) {
		t.Fatal("session expired before its timeout")
	}
	srv.FastForward(2 * time.Second)
	if slices.Contains(srv.Sessions(), id) {
		t.Fatal("session alive after FastForward past its timeout")
	}
	srv.Resume()
	other := connectRef(t, srv)
	if ok, _, err := other.Exists(ctx, "/e"); err != nil || ok {
		t.Fatalf("ephemeral of expired session: exists=%v err=%v", ok, err)
	}
}

func TestServerTTLAndContainerReaping(t *testing.T) {
	srv := zktest.NewServer(t)
	c := connectRef(t, srv)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/ttl", nil, client.PersistentTTL, client.WithTTL(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/box", nil, client.Container); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/box/x", nil, client.Persistent); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/box/x", -1); err != nil {
		t.Fatal(err)
	}
	srv.FastForward(time.Minute)
	if ok, _, _ := c.Exists(ctx, "/ttl"); !ok {
		t.Fatal("TTL node reaped before its TTL")
	}
	if ok, _, _ := c.Exists(ctx, "/box"); ok {
		t.Fatal("empty container not reaped")
	}
	srv.FastForward(time.Hour)
	if ok, _, _ := c.Exists(ctx, "/ttl"); ok {
		t.Fatal("TTL node not reaped after its TTL")
	}
}

func TestServerDropConnectionsKeepsSessions(t *testing.T) {
	srv := zktest.NewServer(t)
	c := connectRef(t, srv)
	ctx := testCtx(t)
	sub := c.Subscribe()
	defer sub.Close()
	if _, err := c.Create(ctx, "/e", nil, client.Ephemeral); err != nil {
		t.Fatal(err)
	}
	sess := c.Session()
	srv.DropConnections()
	waitState(t, sub, client.StateReconnected)
	if c.Session() != sess || !sess.Alive() {
		t.Fatal("session changed after a dropped connection")
	}
	if ok, _, err := c.Exists(ctx, "/e"); err != nil || !ok {
		t.Fatalf("ephemeral after reconnect: %v %v", ok, err)
	}
}

func TestServerPauseResume(t *testing.T) {
	srv := zktest.NewServer(t)
	c := connectRef(t, srv, client.WithSessionTimeout(4*time.Second))
	ctx := testCtx(t)
	sub := c.Subscribe()
	defer sub.Close()
	srv.Pause()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, _, err := c.Get(short, "/")
	cancel()
	if err == nil {
		t.Fatal("a paused server answered")
	}
	srv.Resume()
	if _, _, err := c.Get(ctx, "/"); err != nil {
		t.Fatalf("after Resume: %v", err)
	}
}

func TestServerLatency(t *testing.T) {
	srv := zktest.NewServer(t)
	c := connectRef(t, srv)
	ctx := testCtx(t)
	srv.SetLatency(150 * time.Millisecond)
	start := time.Now()
	if _, _, err := c.Get(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("reply after %v, want at least the 150ms latency", d)
	}
	srv.SetLatency(0)
}

func TestServerDropReplyAfterCommit(t *testing.T) {
	srv := zktest.NewServer(t)
	c := connectRef(t, srv)
	ctx := testCtx(t)
	srv.DropReplyAfterCommit(func(op, path string) bool { return path == "/lost-reply" })
	_, err := c.Create(ctx, "/lost-reply", []byte("x"), client.Persistent)
	if err == nil {
		t.Fatal("create got its reply")
	}
	if !client.IsOutcomeUnknown(err) {
		t.Logf("create error: %v", err)
	}
	eventually(t, "the node to be visible", func() bool {
		ok, _, err := c.Exists(ctx, "/lost-reply")
		return err == nil && ok
	})
}

func TestServerRestartKeepsState(t *testing.T) {
	srv := zktest.NewServer(t)
	c := connectRef(t, srv)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/kept", []byte("v"), client.Persistent); err != nil {
		t.Fatal(err)
	}
	sess := c.Session()
	addr := srv.Addr()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if srv.Addr() != addr {
		t.Fatalf("address changed: %s -> %s", addr, srv.Addr())
	}
	// Requests in flight when the connection dropped fail; the client
	// reconnects to the same session.
	eventually(t, "/kept after the restart", func() bool {
		data, _, err := c.Get(ctx, "/kept")
		return err == nil && string(data) == "v"
	})
	if c.Session() != sess {
		t.Fatal("session lost across a restart")
	}
}

func TestStartServerOutsideTests(t *testing.T) {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	nc.Write([]byte("ruok"))
	buf := make([]byte, 4)
	nc.SetReadDeadline(time.Now().Add(zktest.Scale(5 * time.Second)))
	if _, err := nc.Read(buf); err != nil || string(buf) != "imok" {
		t.Fatalf("ruok: %q %v", buf, err)
	}
	nc.Close()
	srv.Close()
	if _, err := net.DialTimeout("tcp", srv.Addr(), time.Second); err == nil {
		t.Fatal("server still listening after Close")
	}
}

func waitState(t *testing.T, sub *client.Subscription, want client.State) {
	t.Helper()
	timeout := time.After(zktest.Scale(10 * time.Second))
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatal(errors.New("subscription closed"))
			}
			if ev.State == want {
				return
			}
		case <-timeout:
			t.Fatalf("no %v event", want)
		}
	}
}

// Restart is safe for concurrent use, like every method of Server: two
// restarts at once (of goroutines of one test, say) each leave the server
// serving on its address, with its data.
func TestServerConcurrentRestarts(t *testing.T) {
	srv := zktest.NewServer(t)
	c := connectRef(t, srv)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/kept", []byte("v"), client.Persistent); err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				if err := srv.Restart(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if srv.Addr() != addr {
		t.Fatalf("address changed: %s -> %s", addr, srv.Addr())
	}
	eventually(t, "/kept after the restarts", func() bool {
		data, _, err := c.Get(ctx, "/kept")
		return err == nil && string(data) == "v"
	})
}

// A test's reference server has no per-address connection limit by
// default, as zktest's real ZooKeeper has none; ServerMaxClientCnxns sets
// one.
func TestServerMaxClientCnxns(t *testing.T) {
	t.Parallel()
	ruok := func(addr string) string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err.Error()
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(zktest.Scale(5 * time.Second)))
		c.Write([]byte("ruok"))
		b := make([]byte, 4)
		n, _ := io.ReadFull(c, b)
		return string(b[:n])
	}
	hold := func(addr string, n int) {
		for range n {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
		}
	}
	open := zktest.NewServer(t)
	hold(open.Addr(), 70)
	if got := ruok(open.Addr()); got != "imok" {
		t.Errorf("71st connection by default: %q, want imok", got)
	}
	limited := zktest.NewServer(t, zktest.ServerMaxClientCnxns(2))
	hold(limited.Addr(), 2)
	if got := ruok(limited.Addr()); got == "imok" {
		t.Error("a third connection with ServerMaxClientCnxns(2) was answered")
	}
}
