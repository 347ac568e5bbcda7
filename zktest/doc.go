// Package zktest is zkit's test harness for code that talks to ZooKeeper:
// servers to run tests against, and the faults that ZooKeeper code must
// survive, each one call away.
//
// # Servers
//
// The package bundles an in-process reference server (see its own
// documentation in this package) for fast tests, and starts real Apache
// ZooKeeper from a local install for tests that must hold against the real
// thing:
//
//   - StartZooKeeper starts a standalone server for one test, StartEnsemble an
//     n-node ensemble; both return once clients can open sessions and are
//     stopped in t.Cleanup. Kill, Restart and Leader drive failovers, Mode
//     tells what a member is, and Partition (see Faults) splits an ensemble.
//     An ensemble started WithReconfig can change its membership at run
//     time (dynamic reconfiguration): Join starts a server that can be
//     added to it, ServerLine is what a reconfiguration adds.
//   - SharedZooKeeper returns one standalone server per test binary, started
//     on first use (a JVM takes seconds to start). Tests share it and keep
//     apart with UniquePath.
//
// Main stops the shared servers when the test binary ends:
//
//	func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }
//
// Real servers need a JRE and ZooKeeper: ZOOKEEPER_HOME, or Debian's
// package ("apt-get install zookeeper"). Without them the tests that need
// them are skipped, or fail when ZKIT_REQUIRE_ZOOKEEPER=1; with
// ZKIT_REFERENCE_ONLY=1 they are skipped even where ZooKeeper is installed,
// for a quick run on the reference server alone. Every server
// listens on 127.0.0.1 only, on free ports, with its data in a temporary
// directory, and is stopped by the PID zktest started.
//
// The testcontainers backend (Docker) lives in the separate module
// github.com/zkit-dev/zkit/zktest/container, so that importing zktest does
// not pull in a Docker client.
//
// # Faults
//
//   - NewProxy puts a TCP proxy between client and server: Blackhole and Heal
//     a partition, ResetAll connections, SetLatency, and CutAfterNextRequest
//     (or CutAfterNextCreate, for the next create under a path) for a write
//     that is applied but whose reply is lost.
//   - ExpireSession expires a session for real, on the server, without
//     waiting for its timeout: ephemerals go, watchers fire, and the client
//     learns of it when it reconnects.
//   - Partition cuts the network between the members of an ensemble
//     started by StartEnsemble, on their quorum and election ports, into
//     groups (Isolate(i) cuts one member from all the others), and Heal
//     ends it. Clients still reach every member: a leader can be cut from
//     its followers while its clients stay connected to it. Each member
//     reaches each other one through a link of zktest's (127.0.0.1 only,
//     stopped with the ensemble), written into its zoo.cfg; a cut resets
//     the connections between the groups and refuses new ones until Heal,
//     so the members notice at once. Kill and Restart work during a
//     partition, and a restarted member stays cut.
//
// # Every backend
//
// EachBackend runs one test body against real ZooKeeper and against the
// reference server, as subtests "zookeeper" and "reference";
// EachBackendWith does the same on servers of the test's own, configured
// for it (a short container check interval, say). The Backend it
// passes connects clients (Connect) and injects the faults that work on
// both (ExpireSession, CutNextCreate, Blackhole); Reference gives the
// reference server itself for the faults only it has.
//
// # TLS
//
// NewCA makes a throwaway certificate authority whose server certificates
// WithTLS gives real ZooKeeper (a secureClientPort, listed by
// SecureServers) and ServerTLS the reference server, and whose client
// certificates (ClientCert) both servers take as an x509 identity, the
// certificate's subject. EachTLSBackend is EachBackend over TLS: its
// Backend connects with client.WithTLS.
//
// # Timing
//
// Timeouts in zktest, and in tests built on it, go through Scale, so that one
// setting (ZKIT_TIME_SCALE=3) stretches them all on a slow machine. Wait on
// conditions with deadlines; do not sleep and hope.
//
// # Goroutines
//
// Leak checkers (go.uber.org/goleak) see one goroutine of zktest's that
// outlives every test: on Linux, the first real server it starts starts
// zktest.forkLoop, which forks every server from one OS thread for the rest
// of the process, so that the kernel kills the servers if the test binary
// dies (a parent-death signal belongs to the thread that forked). Ignore
// it with goleak.IgnoreTopFunction("github.com/zkit-dev/zkit/zktest.forkLoop").
// Everything else zktest starts (servers, proxies, their goroutines) stops
// in t.Cleanup, and a client's goroutines stop with its Close.
package zktest
