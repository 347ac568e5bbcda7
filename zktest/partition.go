package zktest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Partitions between the members of an ensemble.
//
// Each member's zoo.cfg names the member itself by its real quorum and
// election addresses (it binds them) and every other member T by the
// addresses of two links that zktest owns for this member alone: one to T's
// quorum port, one to T's election port. So every connection that member S
// opens to member T, on either port, goes through the link (S→T) of that
// port, and cutting S from T is closing what those links carry and refusing
// what they are offered.
//
// The election protocol needs one more step. When a member with a lower id
// connects to one with a higher id, the higher one drops the connection and
// connects back, to the election address the lower one announced in its
// first message: its real address, which would bypass the links. So an
// election link reads that first message, checks that it comes from the
// link's source, and replaces the announced address with the address of
// the reverse link (T→S) before passing it on: the connection back goes
// through a link too. A connection whose first message names another member
// than the link's source is refused: only a member that had learnt another
// member's view of the ensemble could open it, and it would cross the
// partition.
//
// A link dials its target when it is offered a connection. Only a leader
// listens on its quorum port, so a quorum link keeps trying for a moment
// when the target refuses (see leaderBindWait); otherwise the far side of a
// link that cannot reach its target sees its connection reset, as it would
// see it refused without the link.

// Partition cuts the network between the members of the ensemble, on their
// quorum and election ports, into groups: members of one group reach each
// other, members of different groups do not, and a member named in no group
// is cut from every other. Partition() with no groups cuts every member from
// every other. Client ports are not touched: clients reach every member as
// before, but a member cut from a majority stops serving them, as ZooKeeper
// does.
//
// A cut is a connection failure, fast and unambiguous: when Partition
// returns, every connection between members it cuts has been reset (both
// directions, both ports), and new ones are accepted and reset at once until
// Heal or the next Partition. The members see the failure at once instead of
// after a timeout, as when a host is down or a firewall rejects. (A silent
// network, where members find out by timeouts, is what Proxy.Blackhole does
// to clients.)
//
// Each call replaces the partition before it. Partition does not wait for
// ZooKeeper to react: wait for that with Mode and Leader (a member cut from
// a majority stops serving; the majority elects a leader if it lost its own).
// Kill and Restart work as usual during a partition, and a restarted member
// is still cut; see Restart for what it waits for.
//
// Partition is for ensembles started by StartEnsemble with at least two
// members. On a standalone server, with an index out of range or named
// twice, or on an ensemble configured with reconfigEnabled=true or
// sslQuorum=true (which zktest cannot interpose on), it fails the test
// that started the servers, as Kill and Restart do.
func (z *ZooKeeper) Partition(groups ...[]int) {
	if err := z.partition(groups); err != nil {
		z.fatalf("zktest: Partition%s: %v", formatGroups(groups), err)
	}
}

// Isolate cuts member i from every other member of the ensemble:
// Partition([]int{i}, [every other member]). It fails the test as Partition
// does.
func (z *ZooKeeper) Isolate(i int) {
	if err := z.partition([][]int{{i}, z.othersThan(i)}); err != nil {
		z.fatalf("zktest: Isolate(%d): %v", i, err)
	}
}

// Heal ends a Partition: the members reach each other again. Connections
// are not replayed; the members reconnect on their own schedule (a member
// that was cut from a majority retries its election connections, a few
// seconds apart at most with zktest's settings), so wait for the ensemble
// to settle with Mode and Leader. Heal on an ensemble that is not
// partitioned, on a standalone server or after Stop does nothing.
func (z *ZooKeeper) Heal() {
	if z.peers != nil {
		z.peers.heal()
	}
}

func (z *ZooKeeper) othersThan(i int) []int {
	var rest []int
	for j := range z.nodes {
		if j != i {
			rest = append(rest, j)
		}
	}
	return rest
}

func formatGroups(groups [][]int) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprint(g)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// partition validates groups and applies them.
func (z *ZooKeeper) partition(groups [][]int) error {
	if len(z.nodes) < 2 {
		return errors.New("a standalone server has no ensemble members to partition (start an ensemble of 2 or more with StartEnsemble)")
	}
	if z.peers == nil {
		return fmt.Errorf("the ensemble was started with %s, so its members connect to each other directly", z.cfg.peerLinksUnsupported())
	}
	group := make([]int, len(z.nodes))
	for i := range group {
		group[i] = -1
	}
	for g, members := range groups {
		for _, i := range members {
			if i < 0 || i >= len(z.nodes) {
				return fmt.Errorf("node index %d out of range [0,%d)", i, len(z.nodes))
			}
			if group[i] >= 0 {
				return fmt.Errorf("node %d is named twice", i)
			}
			group[i] = g
		}
	}
	for i := range group {
		if group[i] < 0 {
			group[i] = len(groups) + i // a group of its own
		}
	}
	return z.peers.partition(group)
}

// peerLinksUnsupported returns why the members of an ensemble configured
// with c must connect to each other directly, or "".
func (c config) peerLinksUnsupported() string {
	for _, k := range []string{"reconfigEnabled", "sslQuorum"} {
		if strings.EqualFold(strings.TrimSpace(c.settings[k]), "true") {
			// reconfigEnabled: followers adopt the leader's server lines,
			// which name the leader's links. sslQuorum: the election
			// links cannot read the first message.
			return k + "=true"
		}
	}
	return ""
}

// linkKind is the member port a link leads to.
type linkKind int

const (
	quorumLink linkKind = iota
	electionLink
)

func (k linkKind) String() string {
	if k == quorumLink {
		return "quorum"
	}
	return "election"
}

// peerNet is the links between the members of one ensemble and the
// partition they are under.
type peerNet struct {
	n     int
	links map[peerKey]*peerLink

	mu     sync.Mutex
	group  []int // group[i]: node i's group; nodes of one group reach each other
	closed bool

	ctx    context.Context // cancelled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type peerKey struct {
	from, to int
	kind     linkKind
}

// peerLink is one directed link: connections that member from opens to
// member to's port of one kind.
type peerLink struct {
	pn       *peerNet
	from, to int
	kind     linkKind
	ln       net.Listener
	target   string // to's real address for the port; set before start
	announce string // for election links: the address of the link (to→from)

	// guarded by pn.mu
	conns   map[*peerConn]struct{}
	refused int // connections refused while cut
}

// peerConn is one connection through a link.
type peerConn struct {
	mu       sync.Mutex
	src, dst net.Conn // dst is nil until dialled
	closed   bool
}

// newPeerNet listens for every link between n members, on free ports of
// 127.0.0.1, unpartitioned. The links do not accept until start.
func newPeerNet(n int) (*peerNet, error) {
	pn := &peerNet{n: n, links: map[peerKey]*peerLink{}, group: make([]int, n)}
	pn.ctx, pn.cancel = context.WithCancel(context.Background())
	for from := 0; from < n; from++ {
		for to := 0; to < n; to++ {
			if from == to {
				continue
			}
			for _, kind := range []linkKind{quorumLink, electionLink} {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					pn.close()
					return nil, fmt.Errorf("zktest: listening for the %s link %d→%d: %w", kind, from, to, err)
				}
				pn.links[peerKey{from, to, kind}] = &peerLink{pn: pn, from: from, to: to, kind: kind, ln: ln,
					conns: map[*peerConn]struct{}{}}
			}
		}
	}
	return pn, nil
}

// link returns the link (from→to) of kind.
func (pn *peerNet) link(from, to int, kind linkKind) *peerLink {
	return pn.links[peerKey{from, to, kind}]
}

// port returns the port of the link (from→to) of kind.
func (pn *peerNet) port(from, to int, kind linkKind) int {
	return pn.link(from, to, kind).ln.Addr().(*net.TCPAddr).Port
}

// start sets every link's target from the members' real ports and starts
// accepting.
func (pn *peerNet) start(nodes []*node) {
	for _, l := range pn.links {
		port := nodes[l.to].quorumPort
		if l.kind == electionLink {
			port = nodes[l.to].elecPort
			l.announce = pn.link(l.to, l.from, electionLink).ln.Addr().String()
		}
		l.target = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	for _, l := range pn.links {
		pn.wg.Add(1)
		go l.acceptLoop()
	}
}

// connected reports whether members a and b reach each other. pn.mu is held.
func (pn *peerNet) connected(a, b int) bool { return pn.group[a] == pn.group[b] }

// reaches reports whether members i and j reach each other under the
// current partition.
func (pn *peerNet) reaches(i, j int) bool {
	pn.mu.Lock()
	defer pn.mu.Unlock()
	return pn.connected(i, j)
}

func (pn *peerNet) partition(group []int) error {
	pn.mu.Lock()
	if pn.closed {
		pn.mu.Unlock()
		return errors.New("the servers have been stopped")
	}
	pn.group = group
	var cut []*peerConn
	for _, l := range pn.links {
		if !pn.connected(l.from, l.to) {
			for c := range l.conns {
				cut = append(cut, c)
			}
		}
	}
	pn.mu.Unlock()
	for _, c := range cut {
		c.close(true)
	}
	slog.Debug("zktest: partitioned the ensemble", "groups", group, "reset", len(cut))
	return nil
}

func (pn *peerNet) heal() {
	pn.mu.Lock()
	pn.group = make([]int, pn.n)
	pn.mu.Unlock()
}

// refused returns how many connections the link (from→to) of kind has
// refused.
func (pn *peerNet) refused(from, to int, kind linkKind) int {
	pn.mu.Lock()
	defer pn.mu.Unlock()
	return pn.link(from, to, kind).refused
}

// close stops every link, resets every connection through them and waits
// until all their goroutines have ended. It may be called more than once.
func (pn *peerNet) close() {
	pn.mu.Lock()
	pn.closed = true
	var all []*peerConn
	for _, l := range pn.links {
		l.ln.Close()
		for c := range l.conns {
			all = append(all, c)
		}
	}
	pn.mu.Unlock()
	pn.cancel()
	for _, c := range all {
		c.close(true)
	}
	pn.wg.Wait()
}

func (l *peerLink) acceptLoop() {
	pn := l.pn
	defer pn.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if pn.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient failure (out of file descriptors, ...): retry.
			select {
			case <-pn.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		pn.mu.Lock()
		if pn.closed || !pn.connected(l.from, l.to) {
			if !pn.closed {
				l.refused++
			}
			pn.mu.Unlock()
			reset(c)
			continue
		}
		pc := &peerConn{src: c}
		l.conns[pc] = struct{}{}
		pn.wg.Add(1)
		pn.mu.Unlock()
		go l.serve(pc)
	}
}

// serve connects pc to the link's target and forwards between them until
// either side closes or the connection is cut.
func (l *peerLink) serve(pc *peerConn) {
	pn := l.pn
	defer pn.wg.Done()
	defer func() {
		pc.close(false)
		pn.mu.Lock()
		delete(l.conns, pc)
		pn.mu.Unlock()
	}()
	dst, err := l.dial(pc)
	if err != nil {
		return // the member is down: its peer sees the connection fail
	}
	if !pc.attach(dst) {
		return // cut meanwhile
	}
	if l.kind == electionLink {
		if err := l.relayFirstMessage(pc); err != nil {
			slog.Debug("zktest: refused an election connection", "link", fmt.Sprintf("%d→%d", l.from, l.to), "err", err)
			return
		}
	}
	pn.wg.Add(1)
	go func() {
		defer pn.wg.Done()
		io.Copy(pc.src, dst)
		pc.close(false)
	}()
	io.Copy(dst, pc.src)
}

// leaderBindWait is how long a quorum link keeps trying to reach a member
// that does not listen on its quorum port.
//
// Only a leader listens there, and it binds the port a moment after the
// election made it leader, while its followers connect at once. Connecting
// directly, a follower that finds the port closed tries again a few times
// within half a second or so; connecting through a link, it finds the link
// listening, so the link must do the trying, or the follower would see a
// leader that hung up on it, give up on it and start another election while
// the leader waits a whole initLimit for followers.
const leaderBindWait = 2 * time.Second

// dial connects to the link's target. A quorum link tries again for a while
// when the target refuses (see leaderBindWait); an election link does not:
// a member binds its election port when it starts.
func (l *peerLink) dial(pc *peerConn) (net.Conn, error) {
	deadline := time.Now().Add(Scale(leaderBindWait))
	for {
		ctx, cancel := context.WithTimeout(l.pn.ctx, Scale(10*time.Second))
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", l.target)
		cancel()
		if err == nil || l.kind != quorumLink || time.Now().After(deadline) || pc.isClosed() {
			return c, err
		}
		select {
		case <-l.pn.ctx.Done():
			return nil, l.pn.ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// The first message of an election connection (QuorumCnxManager's
// InitialMessage): a protocol version, the sender's server id, and the
// election addresses the sender announces, "host:port" joined by "|".
// Servers before 3.5 send only the id, which is never negative.
const (
	electionProtocolV1 = -65536
	electionProtocolV2 = -65535
	maxAnnounced       = 4096
)

// relayFirstMessage reads the first message of an election connection from
// its source, checks that the source is the link's, and passes it on with
// the address of the reverse link announced instead of the source's own.
func (l *peerLink) relayFirstMessage(pc *peerConn) error {
	pc.src.SetReadDeadline(time.Now().Add(Scale(10 * time.Second)))
	defer pc.src.SetReadDeadline(time.Time{})
	var hdr [8]byte
	if _, err := io.ReadFull(pc.src, hdr[:]); err != nil {
		return err
	}
	version := int64(binary.BigEndian.Uint64(hdr[:]))
	sid := version
	var announced []byte
	if version < 0 {
		if version != electionProtocolV1 && version != electionProtocolV2 {
			return fmt.Errorf("unknown protocol version %d", version)
		}
		var rest [12]byte
		if _, err := io.ReadFull(pc.src, rest[:]); err != nil {
			return err
		}
		sid = int64(binary.BigEndian.Uint64(rest[:8]))
		n := int32(binary.BigEndian.Uint32(rest[8:]))
		if n <= 0 || n > maxAnnounced {
			return fmt.Errorf("announced address of %d bytes", n)
		}
		announced = make([]byte, n)
		if _, err := io.ReadFull(pc.src, announced); err != nil {
			return err
		}
	}
	if sid != int64(l.from)+1 {
		return fmt.Errorf("the connection comes from server.%d (node %d), not node %d", sid, sid-1, l.from)
	}
	var msg []byte
	if version < 0 {
		msg = binary.BigEndian.AppendUint64(msg, uint64(version))
		msg = binary.BigEndian.AppendUint64(msg, uint64(sid))
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(l.announce)))
		msg = append(msg, l.announce...)
	} else {
		msg = hdr[:]
	}
	_, err := pc.dst.Write(msg)
	return err
}

// attach sets the connection's far side; false (and dst closed) if the
// connection was closed meanwhile.
func (c *peerConn) attach(dst net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		dst.Close()
		return false
	}
	c.dst = dst
	return true
}

func (c *peerConn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// close closes both sides, with a TCP reset if reset.
func (c *peerConn) close(reset bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	for _, nc := range []net.Conn{c.src, c.dst} {
		if nc == nil {
			continue
		}
		if reset {
			if tc, ok := nc.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
		}
		nc.Close()
	}
}

// reset closes c with a TCP reset.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// answers reports whether the server at addr answers the srvr four-letter
// word at all: a member cut from its quorum does, saying it is not serving.
func answers(ctx context.Context, addr string) error {
	_, err := FourLetterWord(ctx, addr, "srvr")
	return err
}
