package zktest

import (
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest/internal/refserver"
)

// Server is the bundled reference server: an in-process server that speaks
// ZooKeeper's wire protocol and, for everything a client can observe,
// behaves like a standalone Apache ZooKeeper 3.8 (sessions and their
// expiry, every create mode including containers and TTL nodes, Stat
// fields, ACLs with the world, ip, digest and auth schemes (and x509 with
// ServerTLS), multi, watches
// and setWatches, four-letter words). Any ZooKeeper client can use it:
// go-zookeeper, zkit's client, Curator, kazoo.
//
// Its clock is under the test's control (FastForward), and faults are one
// call each: ExpireSession, DropConnections, Pause and Resume, SetLatency,
// DropReplyAfterCommit, Restart.
//
// Its methods are safe for concurrent use.
type Server struct {
	srv *refserver.Server
}

// ServerOption configures NewServer and StartServer.
type ServerOption func(*refserver.Config)

// ServerTickTime sets ZooKeeper's tickTime (default 2s), the unit of
// session timeouts: negotiated timeouts are clamped to [2, 20] ticks unless
// ServerSessionTimeouts says otherwise.
func ServerTickTime(d time.Duration) ServerOption {
	return func(c *refserver.Config) { c.TickTime = d }
}

// ServerSessionTimeouts sets minSessionTimeout and maxSessionTimeout.
func ServerSessionTimeouts(min, max time.Duration) ServerOption {
	return func(c *refserver.Config) { c.MinSessionTimeout, c.MaxSessionTimeout = min, max }
}

// ServerTLS makes the server listen with TLS only, as a ZooKeeper
// secureClientPort does (ca.ServerTLS(t) is a ready configuration). A client
// certificate that cfg verifies authenticates its holder with the x509
// scheme as the certificate's subject ("CN=name" for ca.ClientCert(t,
// name)), and x509 ACLs become valid, as with ZooKeeper's x509 provider.
func ServerTLS(cfg *tls.Config) ServerOption {
	return func(c *refserver.Config) { c.TLS = cfg }
}

// ServerLogger sends the server's logs to l (default: discarded).
func ServerLogger(l *slog.Logger) ServerOption {
	return func(c *refserver.Config) { c.Logger = l }
}

// ServerMaxBuffer sets jute.maxbuffer, the largest frame the server accepts
// (default 0xfffff bytes, as ZooKeeper's).
func ServerMaxBuffer(n int) ServerOption {
	return func(c *refserver.Config) { c.MaxBuffer = n }
}

// ServerMaxClientCnxns sets maxClientCnxns, how many connections one IP
// address may have open at once; 0 means no limit, as in zoo.cfg. A
// connection over the limit is closed as soon as it is accepted, as
// ZooKeeper closes it. By default there is no limit, as on zktest's real
// ZooKeeper (maxClientCnxns=0), since a test's clients all come from
// 127.0.0.1; ZooKeeper's own default, and `zkit serve`'s, is 60.
func ServerMaxClientCnxns(n int) ServerOption {
	if n <= 0 {
		n = -1
	}
	return func(c *refserver.Config) { c.MaxClientCnxns = n }
}

// ServerWatchEventZxids makes the server send each watch event with the
// zxid of the transaction that fired it, as ZooKeeper 3.9 and later do
// (client.WatchEvent.Zxid). By default it sends -1 there, as ZooKeeper
// 3.8 does.
func ServerWatchEventZxids() ServerOption {
	return func(c *refserver.Config) { c.WatchEventZxids = true }
}

// ServerWithoutTTL makes createTTL fail with Unimplemented, as a ZooKeeper
// started without zookeeper.extendedTypesEnabled=true does. By default TTL
// nodes work.
func ServerWithoutTTL() ServerOption {
	return func(c *refserver.Config) { c.DisableExtendedTypes = true }
}

// ServerWithoutContainers makes the server answer createContainer as a
// ZooKeeper older than 3.5 does: Unimplemented, then it closes the
// connection (the session lives on). By default containers work.
func ServerWithoutContainers() ServerOption {
	return func(c *refserver.Config) { c.DisableContainers = true }
}

// ServerWithoutPersistentWatches makes the server answer addWatch and
// setWatches2 as a ZooKeeper older than 3.6 does: Unimplemented, then it
// closes the connection (the session lives on). By default persistent
// watches work.
func ServerWithoutPersistentWatches() ServerOption {
	return func(c *refserver.Config) { c.DisablePersistentWatches = true }
}

// ServerContainerCheckInterval sets how often, on the server's clock, empty
// containers and expired TTL nodes are deleted (default 60s, as
// znode.container.checkIntervalMs). FastForward always runs a pass.
func ServerContainerCheckInterval(d time.Duration) ServerOption {
	return func(c *refserver.Config) { c.ContainerCheckInterval = d }
}

// ServerSuperUser makes a client that adds digest auth "user:password" a
// super user, who passes every ACL check (ZooKeeper's superDigest).
func ServerSuperUser(user, password string) ServerOption {
	return ServerSuperDigest(superDigest(user, password))
}

// superDigest is ZooKeeper's digest of "user:password": "user:" and the
// base64 SHA-1 of it.
func superDigest(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// ServerSuperDigest makes a client whose digest identity is digest (as
// zookeeper.DigestAuthenticationProvider.superDigest, "user:" and the
// base64 SHA-1 of "user:password") a super user; ServerSuperUser computes
// it from the password.
func ServerSuperDigest(digest string) ServerOption {
	return func(c *refserver.Config) { c.SuperDigest = digest }
}

// ServerReconfigEnabled makes the server answer reconfig as a standalone
// ZooKeeper with reconfigEnabled=true does (Unimplemented: a standalone
// server's membership cannot change) rather than with ReconfigDisabled.
func ServerReconfigEnabled() ServerOption {
	return func(c *refserver.Config) { c.ReconfigEnabled = true }
}

// NewServer starts a reference server on a free port of 127.0.0.1 for the
// test and returns it ready to use; it is closed when the test ends.
func NewServer(t testing.TB, opts ...ServerOption) *Server {
	t.Helper()
	s, err := StartServer("127.0.0.1:0", opts...)
	if err != nil {
		t.Fatalf("zktest: start reference server: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartServer starts a reference server listening on addr (host:port; port
// 0 picks a free one) outside of a test, as `zkit serve` does. Close stops
// it.
func StartServer(addr string, opts ...ServerOption) (*Server, error) {
	cfg := refserver.Config{MaxClientCnxns: -1}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := refserver.Start(addr, cfg)
	if err != nil {
		return nil, err
	}
	return &Server{srv: srv}, nil
}

// Addr returns the server's address, host:port.
func (s *Server) Addr() string { return s.srv.Addr() }

// Servers returns the connect string as a list, for client constructors.
func (s *Server) Servers() []string { return []string{s.srv.Addr()} }

// Dialer returns a dial function with the signature of go-zookeeper's
// WithDialer that connects to this server whatever address it is given.
func (s *Server) Dialer() func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, _ string, timeout time.Duration) (net.Conn, error) {
		return net.DialTimeout(network, s.srv.Addr(), timeout)
	}
}

// ExpireSession expires a session now, as if its timeout had passed: its
// ephemeral nodes are deleted (their watches fire) and its connection is
// closed, so the client learns of the expiry when it reconnects. It reports
// whether the session was alive.
func (s *Server) ExpireSession(id int64) bool { return s.srv.ExpireSession(id) }

// DropConnections closes every client connection. Sessions survive, and
// clients that reconnect in time resume them.
func (s *Server) DropConnections() { s.srv.DropConnections() }

// Pause turns the server into a black hole: connections are accepted but
// nothing is read, answered or sent until Resume. Requests sent meanwhile
// are processed after Resume. Sessions keep ageing, so clients that cannot
// ping in time lose them, as in a network partition.
func (s *Server) Pause() { s.srv.Pause() }

// Resume ends a Pause.
func (s *Server) Resume() { s.srv.Resume() }

// SetLatency delays every reply and watch event by d, keeping their order;
// 0 removes the delay.
func (s *Server) SetLatency(d time.Duration) { s.srv.SetLatency(d) }

// DropReplyAfterCommit arms a one-shot fault: the next request for which
// match(op, path) is true is applied, and then its connection is closed
// before the reply is sent, so the client sees a connection loss for a
// write that happened. op is ZooKeeper's opcode name ("create", "create2",
// "delete", "setData", "multi", ...), path the request's path (for a
// multi, its first op's). A nil match disarms the fault. match runs on the
// server's goroutines with the server locked: keep it quick, synchronise
// what it shares with the test, and do not call the server from it.
func (s *Server) DropReplyAfterCommit(match func(op, path string) bool) {
	s.srv.DropReplyAfterCommit(match)
}

// FastForward advances the server's clock by d. Before it returns, sessions
// whose timeout has passed are expired and empty containers and expired TTL
// nodes are deleted.
//
// Connected clients are taken to have pinged through the skipped time, so
// their sessions live on (a TTL test keeps its client). Sessions without a
// connection, and all sessions while the server is paused, age by d: to
// expire a connected client's session by the clock, Pause, FastForward
// past its timeout, then Resume (or use ExpireSession).
func (s *Server) FastForward(d time.Duration) { s.srv.FastForward(d) }

// Restart simulates a restart of the server: every connection is dropped
// and the server listens again on the same address with its data, sessions
// (with fresh timeouts) and zxid kept.
func (s *Server) Restart() error { return s.srv.Restart() }

// Sessions returns the ids of the live sessions, in increasing order.
func (s *Server) Sessions() []int64 { return s.srv.Sessions() }

// Zxid returns the zxid of the last change the server applied.
func (s *Server) Zxid() int64 { return s.srv.Zxid() }

// Close stops the server and waits for all its goroutines.
func (s *Server) Close() { s.srv.Close() }
