package zktest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// connectClient connects a zkit client to servers only, with the given
// session timeout; it is closed when the test ends.
func connectClient(t *testing.T, servers []string, sessionTimeout time.Duration) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Scale(30*time.Second))
	defer cancel()
	c, err := client.Connect(ctx, servers, client.WithSessionTimeout(sessionTimeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// callCtx is the deadline of one client call in these tests.
func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Scale(10*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// modes returns every node's Mode, "-" for a node that does not serve.
func modes(z *ZooKeeper) []string {
	m := make([]string, len(z.nodes))
	for i := range m {
		var err error
		if m[i], err = z.Mode(i); err != nil {
			m[i] = "-"
		}
	}
	return m
}

// waitModes waits until every node's Mode is the one want gives ("-": not
// serving), and returns the modes.
func waitModes(t *testing.T, z *ZooKeeper, within time.Duration, what string, want func(m []string) bool) []string {
	t.Helper()
	var m []string
	deadline := time.Now().Add(within)
	for {
		if m = modes(z); want(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; modes %v", within, what, m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncedGet syncs c's server with the leader, then reads path.
func syncedGet(t *testing.T, c *client.Client, path string) (string, error) {
	t.Helper()
	if err := c.Sync(callCtx(t), path); err != nil && !errors.Is(err, client.ErrNoNode) {
		t.Fatalf("sync %s: %v", path, err)
	}
	data, _, err := c.Get(callCtx(t), path)
	return string(data), err
}

// linkPorts returns the ports of every link between members.
func linkPorts(z *ZooKeeper) []int {
	var ports []int
	for k := range z.peers.links {
		ports = append(ports, z.peers.port(k.from, k.to, k.kind))
	}
	return ports
}

// peerGoroutines lists the goroutines running member-link code.
func peerGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "zktest.(*peerLink)") || strings.Contains(g, "zktest.(*peerNet)") {
			out = append(out, g)
		}
	}
	return out
}

// memberConns checks the TCP connections to the members' real quorum and
// election ports: it fails the test if one comes from anything but a link
// (a socket of this process), and returns how many there are.
func memberConns(t *testing.T, z *ZooKeeper) int {
	t.Helper()
	own := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list this process's sockets: %v", err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil {
			if inode, ok := strings.CutPrefix(target, "socket:["); ok {
				own[strings.TrimSuffix(inode, "]")] = true
			}
		}
	}
	type sock struct{ local, remote int64 }
	inodes := map[sock]string{}
	var established []sock
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Skipf("cannot list TCP connections: %v", err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 10 || fields[3] != "01" { // 01: ESTABLISHED
				continue
			}
			port := func(addr string) int64 {
				_, hex, _ := strings.Cut(addr, ":")
				p, _ := strconv.ParseInt(hex, 16, 32)
				return p
			}
			s := sock{port(fields[1]), port(fields[2])}
			inodes[s] = fields[9]
			established = append(established, s)
		}
	}
	member := map[int64]string{}
	for _, nd := range z.nodes {
		member[int64(nd.quorumPort)] = fmt.Sprintf("node %d's quorum port", nd.index)
		member[int64(nd.elecPort)] = fmt.Sprintf("node %d's election port", nd.index)
	}
	n := 0
	for _, s := range established {
		what, ok := member[s.local]
		if !ok {
			continue
		}
		n++
		// The other end of the connection, and who holds it.
		if inode, ok := inodes[sock{s.remote, s.local}]; ok && !own[inode] {
			t.Errorf("a connection to %s comes from port %d, not from a link: members connect directly", what, s.remote)
		}
	}
	return n
}

// TestPartitionIsolatesLeader cuts the leader of a 3-node ensemble from both
// followers: they elect a leader of their own, the old one stops serving
// and its clients lose their sessions; after Heal it follows the new leader
// and serves what the majority wrote, and nothing its clients tried to write.
func TestPartitionIsolatesLeader(t *testing.T) {
	z := StartEnsemble(t, 3)
	servers := z.Servers()
	checkLoopbackOnly(t, linkPorts(z)...)
	// Every member connects to every other (the election connections)
	// and the followers to the leader, all through links. Members that
	// meet twice drop one of the two connections, so the count settles
	// a moment after the ensemble serves.
	waitFor(t, Scale(10*time.Second), "5 connections to the members' quorum and election ports", func() bool {
		return memberConns(t, z) >= 3+2
	})
	old, err := z.Leader()
	if err != nil {
		t.Fatal(err)
	}
	followers := z.othersThan(old)

	const sessionTimeout = 3 * time.Second
	oc := connectClient(t, []string{servers[old]}, Scale(sessionTimeout))
	mc := connectClient(t, []string{servers[followers[0]], servers[followers[1]]}, Scale(30*time.Second))
	if _, err := oc.Create(callCtx(t), "/p", nil, client.Persistent); err != nil {
		t.Fatal(err)
	}
	sess := oc.Session()

	t0 := time.Now()
	z.Isolate(old)

	// The followers elect a leader among themselves; the old leader serves
	// no more (it is looking for a quorum it cannot reach).
	m := waitModes(t, z, Scale(30*time.Second), "a leader among the followers", func(m []string) bool {
		return m[old] == "-" && (m[followers[0]] == "leader") != (m[followers[1]] == "leader") &&
			(m[followers[0]] == "follower") != (m[followers[1]] == "follower")
	})
	next := followers[0]
	if m[next] != "leader" {
		next = followers[1]
	}
	t.Logf("node %d isolated; node %d leads after %v", old, next, time.Since(t0))

	// A client connected only to the old leader cannot write: the write
	// fails, and (checked after Heal) is not applied.
	if _, err := oc.Create(callCtx(t), "/p/minority", nil, client.Persistent); err == nil {
		t.Fatal("a write through the isolated old leader succeeded")
	} else {
		t.Logf("write through the isolated old leader: %v", err)
	}
	// Its client is suspended, and loses its session after its timeout.
	waitFor(t, Scale(10*time.Second), "the old leader's client to be suspended", func() bool {
		s, _ := oc.Suspended()
		return s || !sess.Alive()
	})
	select {
	case <-sess.Done():
		if !client.IsSessionLost(sess.Err()) {
			t.Fatalf("session ended with %v; want it lost", sess.Err())
		}
	case <-time.After(Scale(sessionTimeout + 10*time.Second)):
		t.Fatal("the old leader's client kept its session")
	}

	// The majority serves writes meanwhile.
	var majorityErr error
	waitFor(t, Scale(30*time.Second), "a write on the majority side", func() bool {
		_, majorityErr = mc.Create(callCtx(t), "/p/majority", []byte("v1"), client.Persistent)
		if errors.Is(majorityErr, client.ErrNodeExists) {
			majorityErr = nil // an earlier attempt whose reply was lost
		}
		return majorityErr == nil || !client.IsRetryable(majorityErr) && !client.IsOutcomeUnknown(majorityErr)
	})
	if majorityErr != nil {
		t.Fatalf("write on the majority side: %v", majorityErr)
	}
	if m := modes(z); m[old] != "-" {
		t.Fatalf("the isolated old leader serves again before Heal: modes %v", m)
	}

	// After Heal the old leader follows the new one and serves what the
	// majority wrote.
	t1 := time.Now()
	z.Heal()
	waitModes(t, z, Scale(60*time.Second), "the old leader to rejoin as a follower", func(m []string) bool {
		return m[old] == "follower" && m[next] == "leader"
	})
	t.Logf("old leader %d follows after %v", old, time.Since(t1))
	memberConns(t, z)
	rc := connectClient(t, []string{servers[old]}, Scale(10*time.Second))
	if data, err := syncedGet(t, rc, "/p/majority"); data != "v1" || err != nil {
		t.Fatalf("through the healed old leader: Get(/p/majority) = %q, %v; want v1", data, err)
	}
	if _, err := syncedGet(t, rc, "/p/minority"); !errors.Is(err, client.ErrNoNode) {
		t.Fatalf("through the healed old leader: Get(/p/minority): %v; want no node (the write was not applied)", err)
	}
}

// TestIsolateFollower cuts one follower from the others: the majority keeps
// serving writes; the follower stays cut across its own restart and comes
// back after Heal; a majority member's crash and restart work through the
// links. It also checks Partition's input and that Stop leaves no link
// behind.
func TestIsolateFollower(t *testing.T) {
	leaks := len(peerGoroutines()) == 0
	z := StartEnsemble(t, 3)
	servers := z.Servers()
	leader, err := z.Leader()
	if err != nil {
		t.Fatal(err)
	}
	others := z.othersThan(leader)
	f, other := others[0], others[1]

	t.Run("bad input", func(t *testing.T) {
		for _, tc := range []struct {
			groups [][]int
			want   string
		}{
			{[][]int{{0}, {3}}, "node index 3 out of range [0,3)"},
			{[][]int{{-1}}, "node index -1 out of range [0,3)"},
			{[][]int{{0, 1}, {1, 2}}, "node 1 is named twice"},
			{[][]int{{2, 2}}, "node 2 is named twice"},
		} {
			if err := z.partition(tc.groups); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("partition(%v) = %v; want %q", tc.groups, err, tc.want)
			}
		}
		if msg := fatalMessage(t, z, func() { z.Partition([]int{0}, []int{1, 5}) }); !strings.Contains(msg, "zktest: Partition([0], [1 5]): node index 5 out of range") {
			t.Errorf("Partition with a bad index failed the test with %q", msg)
		}
		if msg := fatalMessage(t, z, func() { z.Isolate(3) }); !strings.Contains(msg, "zktest: Isolate(3): node index 3 out of range") {
			t.Errorf("Isolate(3) failed the test with %q", msg)
		}
		if m := modes(z); m[leader] != "leader" || m[f] != "follower" || m[other] != "follower" {
			t.Fatalf("bad input changed the ensemble: modes %v", m)
		}
	})

	c := connectClient(t, []string{servers[leader], servers[other]}, Scale(30*time.Second))
	if _, err := c.Create(callCtx(t), "/f", nil, client.Persistent); err != nil {
		t.Fatal(err)
	}
	z.Isolate(f)
	waitModes(t, z, Scale(20*time.Second), "the isolated follower to stop serving", func(m []string) bool { return m[f] == "-" })

	// The majority keeps its leader and serves writes, without a hitch.
	if _, err := c.Create(callCtx(t), "/f/during", []byte("v1"), client.Persistent); err != nil {
		t.Fatalf("write on the majority side: %v", err)
	}
	if m := modes(z); m[leader] != "leader" || m[other] != "follower" {
		t.Fatalf("modes %v while node %d is isolated; want node %d still leading", m, f, leader)
	}

	// Restarted, the isolated follower is still cut: Restart returns while
	// it does not serve, and its peers refuse it.
	refusedBefore := z.peers.refused(f, leader, electionLink) + z.peers.refused(f, other, electionLink)
	z.Restart(f)
	waitFor(t, Scale(20*time.Second), "the restarted follower's election connections to be refused", func() bool {
		return z.peers.refused(f, leader, electionLink)+z.peers.refused(f, other, electionLink) > refusedBefore
	})
	if m, err := z.Mode(f); err == nil {
		t.Fatalf("the restarted isolated follower serves as %s", m)
	}
	cfg, err := os.ReadFile(filepath.Join(filepath.Dir(z.LogFile(f)), "zoo.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []int{leader, other} {
		want := fmt.Sprintf("server.%d=127.0.0.1:%d:%d\n", j+1, z.peers.port(f, j, quorumLink), z.peers.port(f, j, electionLink))
		if !strings.Contains(string(cfg), want) {
			t.Errorf("node %d's zoo.cfg lacks %q:\n%s", f, want, cfg)
		}
	}

	// A crash and restart on the majority side: the two elect a leader
	// again through their links, and serve.
	z.Kill(other)
	z.Restart(other)
	m := waitModes(t, z, Scale(30*time.Second), "a leader on the majority side", func(m []string) bool {
		return m[f] == "-" && (m[leader] == "leader") != (m[other] == "leader") && (m[leader] == "follower") != (m[other] == "follower")
	})
	t.Logf("after restarting node %d: modes %v", other, m)
	if m[f] != "-" {
		t.Fatalf("the isolated follower serves: modes %v", m)
	}
	waitFor(t, Scale(30*time.Second), "a write on the majority side after the restart", func() bool {
		_, err := c.Create(callCtx(t), "/f/after", []byte("v2"), client.Persistent)
		return err == nil || errors.Is(err, client.ErrNodeExists)
	})

	// Healed, the follower rejoins and serves what was written without it.
	z.Heal()
	waitModes(t, z, Scale(60*time.Second), "the isolated follower to rejoin", func(m []string) bool { return m[f] == "follower" })
	fc := connectClient(t, []string{servers[f]}, Scale(10*time.Second))
	for path, want := range map[string]string{"/f/during": "v1", "/f/after": "v2"} {
		if data, err := syncedGet(t, fc, path); data != want || err != nil {
			t.Fatalf("through the healed follower: Get(%s) = %q, %v; want %q", path, data, err, want)
		}
	}

	fc.Close()
	c.Close()
	z.Stop()
	if !leaks {
		t.Log("not checking for leaked link goroutines: other tests' links were running")
		return
	}
	deadline := time.Now().Add(Scale(2 * time.Second))
	for g := peerGoroutines(); len(g) != 0; g = peerGoroutines() {
		if time.Now().After(deadline) {
			t.Fatalf("%d link goroutines left after Stop:\n%s", len(g), strings.Join(g, "\n\n"))
		}
		time.Sleep(time.Millisecond)
	}
	for _, port := range linkPorts(z) {
		if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			c.Close()
			t.Fatalf("a link still accepts on port %d after Stop", port)
		}
	}
}

// TestPartitionStandalone: a standalone server has nothing to partition.
func TestPartitionStandalone(t *testing.T) {
	z := SharedZooKeeper(t)
	if err := z.partition([][]int{{0}}); err == nil || !strings.Contains(err.Error(), "standalone") {
		t.Fatalf("partition on a standalone server: %v; want an error saying it is standalone", err)
	}
	// On the shared server, which belongs to no test, it panics.
	func() {
		defer func() {
			if r := fmt.Sprint(recover()); !strings.Contains(r, "zktest: Isolate(0): a standalone server") {
				t.Fatalf("Isolate on the shared server panicked with %q", r)
			}
		}()
		z.Isolate(0)
	}()
	z.Heal() // nothing to heal
	if err := probe(z.Servers()[0]); err != nil {
		t.Fatal(err)
	}
}

func TestPeerLinksUnsupported(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{nil, ""},
		{[]Option{WithConfig("reconfigEnabled", "false")}, ""},
		{[]Option{WithConfig("reconfigEnabled", "True")}, "reconfigEnabled=true"},
		{[]Option{WithConfig("sslQuorum", "true")}, "sslQuorum=true"},
	} {
		if got := newConfig(tc.opts).peerLinksUnsupported(); got != tc.want {
			t.Errorf("%d options: peerLinksUnsupported = %q; want %q", len(tc.opts), got, tc.want)
		}
	}
}

// fatalMessage runs fn with z failing a stand-in for its test, and returns
// the message fn failed it with ("" if none).
func fatalMessage(t *testing.T, z *ZooKeeper, fn func()) string {
	t.Helper()
	rec := &fatalRecorder{TB: t}
	saved := z.tb
	z.tb = rec
	defer func() { z.tb = saved }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
	return rec.msg
}

type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fakeMember is a listener standing in for a member's quorum or election
// port: it records what each connection sends first.
type fakeMember struct {
	ln    net.Listener
	conns chan net.Conn
}

func newFakeMember(t *testing.T) *fakeMember {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMember{ln: ln, conns: make(chan net.Conn, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			m.conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-m.conns:
				c.Close()
			default:
				return
			}
		}
	})
	return m
}

func (m *fakeMember) port() int { return m.ln.Addr().(*net.TCPAddr).Port }

func (m *fakeMember) accept(t *testing.T) net.Conn {
	t.Helper()
	select {
	case c := <-m.conns:
		t.Cleanup(func() { c.Close() })
		return c
	case <-time.After(Scale(5 * time.Second)):
		t.Fatal("no connection reached the member")
		return nil
	}
}

// initialMessage is an election connection's first message from server.sid.
func initialMessage(version, sid int64, addr string) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(version))
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	b = binary.BigEndian.AppendUint32(b, uint32(len(addr)))
	return append(b, addr...)
}

// expectReset fails unless c is closed by the other side within a while.
func expectReset(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: read %v; want the connection closed", what, err)
	}
}

// expectRefused fails unless a new connection to the link (from→to) of
// kind is reset: at once, while connecting (the reset can overtake the
// connect's completion on loopback), or soon after.
func expectRefused(t *testing.T, pn *peerNet, from, to int, kind linkKind, what string) {
	t.Helper()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(pn.port(from, to, kind))))
	if errors.Is(err, syscall.ECONNRESET) {
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer c.Close()
	expectReset(t, c, what)
}

func dialLink(t *testing.T, pn *peerNet, from, to int, kind linkKind) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(pn.port(from, to, kind))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestPeerLinks drives the links between members over plain TCP, with
// listeners standing in for the members' ports.
func TestPeerLinks(t *testing.T) {
	leaks := len(peerGoroutines()) == 0
	quorum := []*fakeMember{newFakeMember(t), newFakeMember(t), newFakeMember(t)}
	elec := []*fakeMember{newFakeMember(t), newFakeMember(t), newFakeMember(t)}
	pn, err := newPeerNet(3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pn.close)
	var nodes []*node
	for i := range 3 {
		nodes = append(nodes, &node{index: i, quorumPort: quorum[i].port(), elecPort: elec[i].port()})
	}
	pn.start(nodes)

	t.Run("election first message", func(t *testing.T) {
		// Node 0 (server.1) announces its real address; node 1 gets the
		// link (1→0) instead, and connecting back goes through a link.
		c := dialLink(t, pn, 0, 1, electionLink)
		msg := initialMessage(electionProtocolV1, 1, net.JoinHostPort("127.0.0.1", strconv.Itoa(elec[0].port())))
		if _, err := c.Write(append(msg, "after"...)); err != nil {
			t.Fatal(err)
		}
		got := elec[1].accept(t)
		want := initialMessage(electionProtocolV1, 1, net.JoinHostPort("127.0.0.1", strconv.Itoa(pn.port(1, 0, electionLink))))
		buf := make([]byte, len(want)+len("after"))
		got.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
		if _, err := io.ReadFull(got, buf); err != nil || string(buf) != string(want)+"after" {
			t.Fatalf("member 1 read %q, %v; want %q", buf, err, string(want)+"after")
		}
		if _, err := got.Write([]byte("reply")); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
		if _, err := io.ReadFull(c, buf[:5]); err != nil || string(buf[:5]) != "reply" {
			t.Fatalf("node 0 read %q, %v", buf[:5], err)
		}

		// A first message from another server than the link's source is
		// refused: it would cross a partition.
		wrong := dialLink(t, pn, 2, 1, electionLink)
		if _, err := wrong.Write(initialMessage(electionProtocolV2, 1, "127.0.0.1:1")); err != nil {
			t.Fatal(err)
		}
		expectReset(t, wrong, "a first message from server.1 on the link 2→1")
	})

	t.Run("cut and heal", func(t *testing.T) {
		q01 := dialLink(t, pn, 0, 1, quorumLink)
		m1 := quorum[1].accept(t)
		q12 := dialLink(t, pn, 1, 2, quorumLink)
		m2 := quorum[2].accept(t)
		q21 := dialLink(t, pn, 2, 1, quorumLink)
		m1b := quorum[1].accept(t)
		if err := pn.partition([]int{0, 1, 1}); err != nil { // {0} | {1, 2}
			t.Fatal(err)
		}
		expectReset(t, q01, "node 0's connection to node 1")
		expectReset(t, m1, "node 1's side of node 0's connection")
		for _, c := range []net.Conn{q12, m2, q21, m1b} {
			if _, err := c.Write([]byte("x")); err != nil {
				t.Fatalf("a connection inside a group was cut: %v", err)
			}
		}
		buf := make([]byte, 1)
		m2.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
		if _, err := io.ReadFull(m2, buf); err != nil {
			t.Fatalf("a connection inside a group stopped forwarding: %v", err)
		}

		before := pn.refused(1, 0, quorumLink)
		expectRefused(t, pn, 1, 0, quorumLink, "a new connection from node 1 to node 0")
		if n := pn.refused(1, 0, quorumLink); n != before+1 {
			t.Fatalf("refused = %d; want %d", n, before+1)
		}
		if pn.reaches(0, 1) || pn.reaches(0, 2) || !pn.reaches(1, 2) || !pn.reaches(0, 0) {
			t.Fatal("reaches is wrong")
		}

		pn.heal()
		c := dialLink(t, pn, 1, 0, quorumLink)
		m0 := quorum[0].accept(t)
		if _, err := c.Write([]byte("y")); err != nil {
			t.Fatal(err)
		}
		m0.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
		if _, err := io.ReadFull(m0, buf); err != nil || buf[0] != 'y' {
			t.Fatalf("after heal: read %q, %v", buf, err)
		}
	})

	t.Run("close", func(t *testing.T) {
		held := dialLink(t, pn, 0, 2, quorumLink)
		quorum[2].accept(t)
		pn.close()
		expectReset(t, held, "a connection after close")
		if err := pn.partition([]int{0, 1, 2}); err == nil {
			t.Fatal("partition after close succeeded")
		}
		pn.close() // idempotent
		if !leaks {
			return
		}
		deadline := time.Now().Add(Scale(2 * time.Second))
		for g := peerGoroutines(); len(g) != 0; g = peerGoroutines() {
			if time.Now().After(deadline) {
				t.Fatalf("%d link goroutines left after close:\n%s", len(g), strings.Join(g, "\n\n"))
			}
			time.Sleep(time.Millisecond)
		}
	})
}
