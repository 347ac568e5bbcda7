package zktest

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkit-dev/zkit/client"
)

// zkProbe is a go-zookeeper connection used by the tests to look at the
// servers from outside. It records session states and, by sniffing the
// connect response, the session's password (go-zookeeper keeps it private).
type zkProbe struct {
	*zk.Conn
	mu        sync.Mutex
	states    []zk.State
	changed   chan struct{}
	sessionID int64
	passwd    []byte
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

func connectProbe(t *testing.T, servers []string, sessionTimeout time.Duration) *zkProbe {
	t.Helper()
	p := &zkProbe{changed: make(chan struct{})}
	dialer := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		return &sniffConn{Conn: c, p: p}, nil
	}
	conn, _, err := zk.Connect(servers, sessionTimeout, zk.WithDialer(dialer), zk.WithLogInfo(false),
		zk.WithLogger(nopLogger{}), zk.WithEventCallback(p.event))
	if err != nil {
		t.Fatal(err)
	}
	p.Conn = conn
	t.Cleanup(conn.Close)
	p.waitState(t, 0, zk.StateHasSession, Scale(20*time.Second))
	return p
}

func (p *zkProbe) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	p.mu.Lock()
	p.states = append(p.states, ev.State)
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// mark returns a position in the state history for waitState.
func (p *zkProbe) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.states)
}

// waitState waits until the session reaches state want at or after mark.
func (p *zkProbe) waitState(t *testing.T, mark int, want zk.State, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		p.mu.Lock()
		states, ch := p.states, p.changed
		p.mu.Unlock()
		for _, s := range states[min(mark, len(states)):] {
			if s == want {
				return
			}
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("session never reached %v within %v; states since mark: %v", want, within, states[min(mark, len(states)):])
		}
	}
}

func (p *zkProbe) session() (int64, []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessionID, p.passwd
}

// sniffConn reads the connect response that passes through it.
type sniffConn struct {
	net.Conn
	p    *zkProbe
	buf  []byte
	done bool
}

func (c *sniffConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if !c.done && n > 0 {
		c.buf = append(c.buf, b[:n]...)
		if len(c.buf) >= 4 {
			if l := int(binary.BigEndian.Uint32(c.buf)); len(c.buf) >= 4+l {
				c.done = true
				if r, err := parseConnectResponse(c.buf[4 : 4+l]); err == nil && r.sessionID != 0 {
					c.p.mu.Lock()
					c.p.sessionID, c.p.passwd = r.sessionID, append([]byte(nil), r.passwd...)
					c.p.mu.Unlock()
				}
			}
		}
	}
	return n, err
}

// ensurePath creates path and its parents as persistent znodes.
func ensurePath(t *testing.T, c *zkProbe, path string) {
	t.Helper()
	for i := 1; i <= len(path); i++ {
		if i == len(path) || path[i] == '/' {
			if _, err := c.Create(path[:i], nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				t.Fatalf("create %s: %v", path[:i], err)
			}
		}
	}
}

// waitFor polls cond until it holds or within has passed.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func probe(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), Scale(2*time.Second))
	defer cancel()
	return Probe(ctx, addr)
}

// checkLoopbackOnly fails unless every listening socket on the given ports
// is bound to 127.0.0.1, and the first port has one.
func checkLoopbackOnly(t *testing.T, ports ...int) {
	t.Helper()
	want := map[int]bool{}
	for _, p := range ports {
		want[p] = true
	}
	found := map[int]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			t.Skipf("cannot check listen addresses: %v", err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			host, portHex, _ := strings.Cut(fields[1], ":")
			port, _ := strconv.ParseInt(portHex, 16, 32)
			if !want[int(port)] {
				continue
			}
			found[int(port)] = true
			if host != "0100007F" {
				t.Errorf("port %d listens on %s (%s), not 127.0.0.1", port, host, f)
			}
		}
		fh.Close()
	}
	if !found[ports[0]] {
		t.Errorf("nothing listens on port %d", ports[0])
	}
}

func TestParseMode(t *testing.T) {
	debian := "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-06-16 10:40 UTC\n" +
		"Latency min/avg/max: 0/0.0/0\nReceived: 1\nSent: 0\nConnections: 1\nOutstanding: 0\n" +
		"Zxid: 0x100000000\nMode: follower\nNode count: 5\n"
	if m, err := parseMode(debian); m != "follower" || err != nil {
		t.Errorf("parseMode = %q, %v", m, err)
	}
	if _, err := parseMode("This ZooKeeper instance is not currently serving requests\n"); err == nil {
		t.Error("parseMode of a non-serving answer: no error")
	}
}

func TestStartZooKeeper(t *testing.T) {
	z := StartZooKeeper(t, WithConfig("tickTime", "250"), WithConfig("globalOutstandingLimit", "500"))
	if len(z.Servers()) != 1 || z.ConnectString() != z.Servers()[0] || !strings.HasPrefix(z.Servers()[0], "127.0.0.1:") {
		t.Fatalf("Servers = %v, ConnectString = %q", z.Servers(), z.ConnectString())
	}
	addr := z.Servers()[0]
	if err := probe(addr); err != nil {
		t.Fatalf("not serving after StartZooKeeper: %v", err)
	}
	cfg, err := os.ReadFile(filepath.Join(filepath.Dir(z.LogFile(0)), "zoo.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"tickTime=250", "globalOutstandingLimit=500", "clientPortAddress=127.0.0.1", "minSessionTimeout=400", "4lw.commands.whitelist=*"} {
		if !strings.Contains(string(cfg), line+"\n") {
			t.Errorf("zoo.cfg lacks %q:\n%s", line, cfg)
		}
	}
	checkLoopbackOnly(t, z.nodes[0].clientPort)
	if m, err := z.Mode(0); m != "standalone" || err != nil {
		t.Errorf("Mode = %q, %v", m, err)
	}
	if l, err := z.Leader(); l != 0 || err != nil {
		t.Errorf("Leader = %d, %v; want 0", l, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(5*time.Second))
	defer cancel()
	if out, err := FourLetterWord(ctx, addr, "ruok"); out != "imok" || err != nil {
		t.Errorf("ruok = %q, %v", out, err)
	}
	pid := z.PID(0)
	if pid <= 0 {
		t.Fatalf("PID = %d", pid)
	}

	// A short session timeout is accepted (minSessionTimeout=400).
	c := connectProbe(t, z.Servers(), 500*time.Millisecond)
	if _, err := c.Create("/kept", []byte("v1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()

	z.Kill(0)
	if z.PID(0) != 0 {
		t.Fatal("PID after Kill is not 0")
	}
	if err := probe(addr); err == nil {
		t.Fatal("killed server still serves")
	}
	z.Kill(0) // killing a dead node does nothing

	z.Restart(0)
	if z.PID(0) == 0 || z.PID(0) == pid {
		t.Fatalf("PID after Restart = %d (was %d)", z.PID(0), pid)
	}
	c = connectProbe(t, z.Servers(), 5*time.Second)
	if data, _, err := c.Get("/kept"); string(data) != "v1" || err != nil {
		t.Fatalf("after Restart: Get = %q, %v; want the data kept", data, err)
	}
	c.Close()

	z.Stop()
	z.Stop()
	if err := probe(addr); err == nil {
		t.Fatal("stopped server still serves")
	}
	if z.PID(0) != 0 {
		t.Fatal("PID after Stop is not 0")
	}
	if err := z.restart(0); err == nil {
		t.Fatal("restart after Stop succeeded")
	}
	if b, _ := os.ReadFile(z.LogFile(0)); strings.Count(string(b), "=== zktest: starting node 0") != 2 {
		t.Errorf("server log does not record two starts:\n%s", b)
	}
}

func TestStartFailureIsReported(t *testing.T) {
	inst := InstallOrSkip(t)
	t0 := time.Now()
	_, err := start(inst, t.TempDir(), 1, newConfig([]Option{WithConfig("tickTime", "not-a-number")}))
	if err == nil {
		t.Fatal("a server with a broken zoo.cfg started")
	}
	if !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "server.log") {
		t.Fatalf("error does not say the server exited or where its log is: %v", err)
	}
	if d := time.Since(t0); d > Scale(30*time.Second) {
		t.Errorf("took %v to notice the server died", d)
	}
}

func TestSharedZooKeeper(t *testing.T) {
	z := SharedZooKeeper(t)
	if z2 := SharedZooKeeper(t); z2 != z {
		t.Fatal("SharedZooKeeper returned a second server")
	}
	addr := z.Servers()[0]
	z.Stop() // does nothing on the shared server
	if err := probe(addr); err != nil {
		t.Fatalf("shared server not serving: %v", err)
	}
	c := connectProbe(t, z.Servers(), 5*time.Second)
	base := UniquePath(t)
	ensurePath(t, c, base)
	c.Close()

	// Found dead, it is restarted with its data on the next call.
	z.Kill(0)
	if SharedZooKeeper(t) != z {
		t.Fatal("a new shared server after Kill")
	}
	if err := probe(addr); err != nil {
		t.Fatalf("shared server not serving after the restart: %v", err)
	}
	c = connectProbe(t, z.Servers(), 5*time.Second)
	if ok, _, err := c.Exists(base); !ok || err != nil {
		t.Fatalf("Exists(%s) = %v, %v after restart", base, ok, err)
	}
}

func TestEnsemble(t *testing.T) {
	z := StartEnsemble(t, 3)
	servers := z.Servers()
	if len(servers) != 3 {
		t.Fatalf("Servers = %v", servers)
	}
	var ports []int
	for _, nd := range z.nodes {
		ports = append(ports, nd.clientPort, nd.quorumPort, nd.elecPort)
	}
	checkLoopbackOnly(t, ports...)
	leader, err := z.Leader()
	if err != nil {
		t.Fatal(err)
	}
	for i := range servers {
		m, err := z.Mode(i)
		want := "follower"
		if i == leader {
			want = "leader"
		}
		if m != want || err != nil {
			t.Errorf("Mode(%d) = %q, %v; want %s", i, m, err, want)
		}
	}

	c := connectProbe(t, servers, 10*time.Second)
	if _, err := c.Create("/before", []byte("v1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()

	z.Kill(leader)
	var next int
	waitFor(t, Scale(30*time.Second), "a new leader", func() bool {
		next, err = z.Leader()
		return err == nil && next != leader
	})
	t.Logf("leader %d killed; node %d leads now", leader, next)

	// The two survivors are a quorum: they serve the old data and take writes.
	c = connectProbe(t, []string{servers[next]}, 10*time.Second)
	if data, _, err := c.Get("/before"); string(data) != "v1" || err != nil {
		t.Fatalf("Get(/before) on the new leader = %q, %v", data, err)
	}
	if _, err := c.Create("/during", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()

	z.Restart(leader)
	if m, err := z.Mode(leader); m != "follower" || err != nil {
		t.Errorf("restarted node's Mode = %q, %v; want follower", m, err)
	}
	c = connectProbe(t, []string{servers[leader]}, 10*time.Second)
	if _, err := c.Sync("/"); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get("/before"); string(data) != "v1" || err != nil {
		t.Fatalf("restarted node: Get(/before) = %q, %v; want its data kept", data, err)
	}
	if ok, _, err := c.Exists("/during"); !ok || err != nil {
		t.Fatalf("restarted node: Exists(/during) = %v, %v; want it caught up", ok, err)
	}

	// ExpireSession through a follower: the follower has the leader
	// revalidate the session before it reads the pipelined closeSession.
	owner := connectProbe(t, []string{servers[leader]}, 20*time.Second)
	if _, err := owner.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	id, passwd := owner.session()
	ctx, cancel := context.WithTimeout(context.Background(), Scale(20*time.Second))
	defer cancel()
	if err := ExpireSession(ctx, servers[leader], id, passwd); err != nil {
		t.Fatalf("ExpireSession via follower %d: %v", leader, err)
	}
	other := connectProbe(t, []string{servers[next]}, 10*time.Second)
	if _, err := other.Sync("/eph"); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := other.Exists("/eph"); ok || err != nil {
		t.Fatalf("ephemeral still on the leader after ExpireSession via a follower: %v, %v", ok, err)
	}
}

func TestExpireSession(t *testing.T) {
	z := SharedZooKeeper(t)
	addr := z.Servers()[0]
	owner := connectProbe(t, z.Servers(), 20*time.Second)
	other := connectProbe(t, z.Servers(), 20*time.Second)
	base := UniquePath(t)
	ensurePath(t, other, base)
	if _, err := owner.Create(base+"/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	ok, _, watch, err := other.ExistsW(base + "/eph")
	if !ok || err != nil {
		t.Fatalf("ExistsW = %v, %v", ok, err)
	}
	id, passwd := owner.session()
	if id != owner.SessionID() || len(passwd) != 16 {
		t.Fatalf("sniffed session 0x%x (passwd %d bytes); client says 0x%x", id, len(passwd), owner.SessionID())
	}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(20*time.Second))
	defer cancel()

	// A wrong password changes nothing.
	if err := ExpireSession(ctx, addr, id, make([]byte, 16)); !errors.Is(err, ErrSessionNotFound) {
		t.Fatalf("ExpireSession with a wrong password: %v; want ErrSessionNotFound", err)
	}
	if ok, _, err := other.Exists(base + "/eph"); !ok || err != nil {
		t.Fatalf("ephemeral gone after a failed ExpireSession: %v, %v", ok, err)
	}

	mark := owner.mark()
	t0 := time.Now()
	if err := ExpireSession(ctx, addr, id, passwd); err != nil {
		t.Fatal(err)
	}
	// The ephemeral is deleted by the time ExpireSession returns...
	if ok, _, err := other.Exists(base + "/eph"); ok || err != nil {
		t.Fatalf("ephemeral still there after ExpireSession: %v, %v", ok, err)
	}
	select {
	case ev := <-watch:
		if ev.Type != zk.EventNodeDeleted {
			t.Fatalf("watch event %v; want NodeDeleted", ev)
		}
	case <-time.After(Scale(10 * time.Second)):
		t.Fatal("no NodeDeleted event for the ephemeral")
	}
	// ...and the owner learns that its session expired.
	owner.waitState(t, mark, zk.StateExpired, Scale(10*time.Second))
	t.Logf("session expired in %v", time.Since(t0))

	if err := ExpireSession(ctx, addr, id, passwd); !errors.Is(err, ErrSessionNotFound) {
		t.Fatalf("second ExpireSession: %v; want ErrSessionNotFound", err)
	}
	if err := ExpireSession(ctx, addr, 0, nil); err == nil {
		t.Fatal("ExpireSession(0): no error")
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	oid, opw := other.session()
	if err := ExpireSession(cctx, addr, oid, opw); err == nil {
		t.Fatal("ExpireSession with a cancelled context: no error")
	}
	if ok, _, err := other.Exists(base); !ok || err != nil {
		t.Fatalf("the other session was disturbed: %v, %v", ok, err)
	}
}

func TestProxyWithZooKeeper(t *testing.T) {
	z := SharedZooKeeper(t)
	p := NewProxy(t, z.Servers()[0])
	direct := connectProbe(t, z.Servers(), 20*time.Second)
	c := connectProbe(t, []string{p.Addr()}, Scale(3*time.Second))
	sid := c.SessionID()
	base := UniquePath(t)
	ensurePath(t, direct, base)
	acl := zk.WorldACL(zk.PermAll)

	ctx, cancel := context.WithTimeout(context.Background(), Scale(5*time.Second))
	defer cancel()
	if out, err := FourLetterWord(ctx, p.Addr(), "ruok"); out != "imok" || err != nil {
		t.Errorf("ruok through the proxy = %q, %v", out, err)
	}

	t.Run("CutAfterNextRequest", func(t *testing.T) {
		mark := c.mark()
		p.CutAfterNextRequest()
		if _, err := c.Create(base+"/cut", nil, 0, acl); err == nil {
			t.Fatal("create through a cut connection reported success")
		}
		if ok, _, err := direct.Exists(base + "/cut"); !ok || err != nil {
			t.Fatalf("the cut create was not applied: %v, %v", ok, err)
		}
		c.waitState(t, mark, zk.StateHasSession, Scale(10*time.Second))
		if _, err := c.Create(base+"/after", nil, 0, acl); err != nil {
			t.Fatalf("the fault is not one-shot: %v", err)
		}
	})

	t.Run("Latency", func(t *testing.T) {
		const d = 50 * time.Millisecond
		p.SetLatency(d)
		t0 := time.Now()
		if _, _, err := c.Exists(base); err != nil {
			t.Fatal(err)
		}
		p.SetLatency(0)
		if rtt := time.Since(t0); rtt < 2*d {
			t.Fatalf("round trip %v; want at least %v", rtt, 2*d)
		}
	})

	t.Run("BlackholeHeal", func(t *testing.T) {
		mark := c.mark()
		p.Blackhole()
		c.waitState(t, mark, zk.StateDisconnected, Scale(10*time.Second))
		mark = c.mark()
		p.Heal()
		c.waitState(t, mark, zk.StateHasSession, Scale(10*time.Second))
		// Whether the session outlived the partition depends on the
		// client's timing, not the proxy's: go-zookeeper notices after 2/3
		// of the session timeout and then sleeps 1 s before redialling a
		// single server, which leaves a margin of (timeout/3 - 1 s) minus
		// the ping interval offset.
		if id := c.SessionID(); id != sid {
			t.Logf("the session expired during the partition (0x%x, was 0x%x)", id, sid)
			sid = id
		}
		if _, _, err := c.Exists(base); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ResetAll", func(t *testing.T) {
		mark := c.mark()
		p.ResetAll()
		c.waitState(t, mark, zk.StateDisconnected, Scale(10*time.Second))
		c.waitState(t, mark, zk.StateHasSession, Scale(10*time.Second))
		if _, _, err := c.Exists(base); err != nil {
			t.Fatal(err)
		}
	})
	if c.SessionID() != sid {
		t.Fatalf("session changed: 0x%x, was 0x%x", c.SessionID(), sid)
	}
}

func TestRemoveStaleSharedDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := filepath.Join(tmp, fmt.Sprintf("zktest-shared-%d-123", cmd.Process.Pid))
	live := filepath.Join(tmp, fmt.Sprintf("zktest-shared-%d-456", os.Getppid()))
	mine := filepath.Join(tmp, fmt.Sprintf("zktest-shared-%d-789", os.Getpid()))
	other := filepath.Join(tmp, "zktest-shared-notapid-1")
	for _, d := range []string{dead, live, mine, other} {
		if err := os.MkdirAll(filepath.Join(d, "zk0"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleSharedDirs()
	for d, want := range map[string]bool{dead: false, live: true, mine: true, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", d, err == nil, want)
		}
	}
}

// What ExampleStartZooKeeper shows, for real: a client that lived through
// a crash and a restart reads its data back through Retry, every time.
func TestClientAcrossRestart(t *testing.T) {
	z := StartZooKeeper(t)
	ctx, cancel := context.WithTimeout(context.Background(), Scale(90*time.Second))
	defer cancel()
	c, err := client.Connect(ctx, z.Servers(), client.WithSessionTimeout(Scale(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, "/kept", []byte("v1"), client.Persistent); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		z.Kill(0)
		z.Restart(0)
		var data []byte
		err := c.Retry(ctx, func(ctx context.Context) (err error) {
			data, _, err = c.Get(ctx, "/kept")
			return err
		})
		if err != nil || string(data) != "v1" {
			t.Fatalf("restart %d: %q, %v", i, data, err)
		}
	}
}

// procStatus returns the value of a field of /proc/PID/status, or "".
func procStatus(pid int, field string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// termPending reports whether SIGTERM is pending for process pid (it is
// stopped, so it cannot take it).
func termPending(pid int) bool {
	mask, err := strconv.ParseUint(procStatus(pid, "ShdPnd"), 16, 64)
	return err == nil && mask&(1<<(int(syscall.SIGTERM)-1)) != 0
}

// Kill, Restart, PID and LogFile fail the test on an index out of range,
// as Partition does (and as docs/testing.md says), and Mode returns it as an
// error, instead of panicking, which would end the whole test binary.
func TestBadIndexFailsTheTest(t *testing.T) {
	z := &ZooKeeper{nodes: []*node{{index: 0}}}
	for _, tc := range []struct {
		name string
		call func()
	}{
		{"Kill(1)", func() { z.Kill(1) }},
		{"Restart(-1)", func() { z.Restart(-1) }},
		{"PID(1)", func() { z.PID(1) }},
		{"LogFile(-1)", func() { z.LogFile(-1) }},
		{"Mode(3)", func() {
			if m, err := z.Mode(3); err != nil {
				z.fatalf("%v", err) // the error's text, for the check below
			} else {
				t.Errorf("Mode(3) = %q, nil; want an error", m)
			}
		}},
	} {
		var panicked any
		msg := fatalMessage(t, z, func() {
			defer func() { panicked = recover() }()
			tc.call()
		})
		if panicked != nil {
			t.Errorf("%s panicked (%v) instead of failing the test", tc.name, panicked)
		} else if !strings.Contains(msg, tc.name) || !strings.Contains(msg, "out of range") {
			t.Errorf("%s failed the test with %q; want it to name the call and the bad index", tc.name, msg)
		}
	}
}

// A node whose client port another process took while it was down cannot
// come back on it (its address is the one clients and the ensemble's
// configuration know): Restart fails at once, saying which port is taken,
// with no JVM left running; once the port is free again, Restart brings
// the node back on it.
func TestRestartOnTakenPort(t *testing.T) {
	z := StartZooKeeper(t)
	z.Kill(0)
	ln, err := net.Listen("tcp", z.Servers()[0])
	if err != nil {
		t.Fatalf("taking node 0's port: %v", err)
	}
	defer ln.Close()
	t0 := time.Now()
	err = z.restart(0)
	if !errors.Is(err, errPortTaken) || !strings.Contains(err.Error(), z.Servers()[0]) {
		t.Fatalf("Restart on a taken port: %v; want errPortTaken naming %s", err, z.Servers()[0])
	}
	if d := time.Since(t0); d > Scale(10*time.Second) {
		t.Errorf("took %v to fail", d)
	}
	if pid := z.PID(0); pid != 0 {
		t.Fatalf("a JVM (pid %d) runs after the failed Restart", pid)
	}
	msg := fatalMessage(t, z, func() { z.Restart(0) })
	if !strings.Contains(msg, "Restart(0)") || !strings.Contains(msg, z.Servers()[0]) || !strings.Contains(msg, "in use") {
		t.Errorf("Restart failed the test with %q; want the call, the port and that it is in use", msg)
	}
	ln.Close()
	if err := z.restart(0); err != nil {
		t.Fatalf("Restart once the port is free: %v", err)
	}
	if err := probe(z.Servers()[0]); err != nil {
		t.Fatalf("node 0 does not serve on its port after Restart: %v", err)
	}
}

// Restart is safe for concurrent use: two restarts of one node at once
// (from goroutines of one test, say) run one after the other, never two
// JVMs on the node's ports, one of which Stop would not know of.
func TestConcurrentRestartsOfOneNode(t *testing.T) {
	z := StartZooKeeper(t)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() { errs <- z.restart(0) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Restart: %v", err)
		}
	}
	if log := tail(z.LogFile(0), 10000); strings.Contains(log, "Address already in use") {
		t.Errorf("two JVMs ran at once on node 0's ports:\n%s", tail(z.LogFile(0), 30))
	}
	if err := probe(z.Servers()[0]); err != nil {
		t.Fatalf("after the restarts: %v", err)
	}
}

// The first member of a killed ensemble to be restarted cannot serve: it
// has no quorum until a second one runs. Its Restart returns once it runs
// (instead of failing after the start timeout), and the next Restart brings
// back a quorum that both serve.
func TestRestartKilledEnsemble(t *testing.T) {
	z := StartEnsemble(t, 3, WithStartTimeout(30*time.Second))
	for i := range 3 {
		z.Kill(i)
	}
	if err := z.restart(0); err != nil {
		t.Fatalf("restarting the first member of a dead ensemble: %v", err)
	}
	if z.PID(0) == 0 {
		t.Fatal("node 0 is not running after Restart")
	}
	if err := z.restart(1); err != nil {
		t.Fatalf("restarting the second member: %v", err)
	}
	waitFor(t, Scale(30*time.Second), "node 0 to serve", func() bool { return probe(z.Servers()[0]) == nil })
	if _, err := z.Leader(); err != nil {
		t.Fatal(err)
	}
}

// WithAdminServer gives each node an admin server on 127.0.0.1 alone,
// which answers ZooKeeper's commands over HTTP (JSON), also where the
// four-letter words are not whitelisted (but srvr, which ZooKeeper always
// answers).
func TestAdminServer(t *testing.T) {
	z := StartZooKeeper(t, WithAdminServer(), WithConfig("4lw.commands.whitelist", "ruok"))
	admin := z.AdminServers()
	if len(admin) != 1 || !strings.HasPrefix(admin[0], "127.0.0.1:") {
		t.Fatalf("AdminServers = %v", admin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(10*time.Second))
	defer cancel()
	if out, err := FourLetterWord(ctx, z.Servers()[0], "mntr"); out != "mntr is not executed because it is not in the whitelist.\n" || err != nil {
		t.Errorf("mntr = %q, %v; want it refused", out, err)
	}
	if mode, err := ServerMode(z.Servers()[0]); mode != "standalone" || err != nil {
		t.Errorf("srvr: mode %q, %v", mode, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin[0]+"/commands/srvr", nil)
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("admin server: %v", err)
	}
	defer rsp.Body.Close()
	var got struct {
		Command string `json:"command"`
		Stats   struct {
			State string `json:"server_state"`
		} `json:"server_stats"`
	}
	if err := json.NewDecoder(rsp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Command != "server_stats" || got.Stats.State != "standalone" {
		t.Errorf("/commands/srvr = %+v", got)
	}
	_, port, _ := net.SplitHostPort(admin[0])
	n, _ := strconv.Atoi(port)
	checkLoopbackOnly(t, z.nodes[0].clientPort, n)
}
