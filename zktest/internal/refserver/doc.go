// Package refserver is zkit's reference ZooKeeper server: an in-process
// server that speaks ZooKeeper's jute wire protocol (internal/jute) and, for
// everything a client can observe, behaves like a standalone Apache
// ZooKeeper 3.8. zktest.NewServer and `zkit serve` wrap it; go-zookeeper,
// zkit's client, Curator and kazoo all work against it.
//
// # What it does as ZooKeeper does
//
//   - Sessions: connect, reconnect with id and password (a wrong password or
//     an unknown, closed or expired session gets the "expired" answer:
//     session 0, timeout 0, then the connection closes; the session's
//     current connection is dropped first, as ZooKeeper does), timeouts
//     clamped to [MinSessionTimeout, MaxSessionTimeout], expiry in tick
//     buckets, closeSession, and the refusal (a closed connection, no answer)
//     of a client that has seen a newer zxid than the server.
//   - Every create mode, with ZooKeeper's order of checks and error codes;
//     sequence numbers from the parent's count of child creates; containers
//     reaped once they had a child and are empty; TTL nodes reaped when
//     childless and unchanged for their TTL.
//   - Stat fields exactly: cversion as clients see it (2*creates -
//     children), pzxid on child create and delete, ephemeralOwner 0 for
//     containers and TTL nodes, /zookeeper's own nodes as a fresh server has
//     them.
//   - zxids: every write takes one, failed or not (like ZooKeeper's txn
//     log), as do session creation and close; replies carry the last zxid.
//   - Auth: digest (a null credential fails: AuthFailed, then the
//     connection closes) and ip; any other scheme fails the same way.
//   - ACLs with world, ip (IPv4), digest and auth schemes, super digest,
//     getACL masking digests for callers without ADMIN, and the connection's
//     identities in ZooKeeper's (hash) order; with Config.TLS, TLS on the
//     client port and the x509 scheme (a verified client certificate
//     authenticates its subject, as ZooKeeper's X509AuthenticationProvider
//     does).
//   - multi (results as ZooKeeper 3.8 sends them: on failure the ops before
//     report OK as an error result, the failing op its code, the ops after
//     RuntimeInconsistency; the reply header has no error), multiRead, check
//     (a successful check outside a multi gets no reply, as in 3.8), sync.
//   - Watches: data, exist, child, persistent and persistent recursive, with
//     ZooKeeper's trigger rules and deduplication; events reach a connection
//     before the reply of the request that triggered them, with -1 for
//     zxid in their reply header (Config.WatchEventZxids: the zxid of the
//     transaction that fired them, as ZooKeeper 3.9 sends); setWatches
//     and setWatches2 with the relative zxid; removeWatches and
//     checkWatches.
//   - Four-letter words on the client port (ruok, srvr, stat, mntr, cons,
//     conf, envi, wchs, wchc, wchp, dump, isro, dirs, srst, crst, gtmk,
//     hash).
//   - Strings as ZooKeeper's Java Strings: a malformed UTF-8 sequence reads
//     as U+FFFD, and what the server echoes (sync's path, events setWatches
//     fires at once, digest user names, ACL ids) comes back re-encoded, a
//     character outside the BMP as two encoded surrogates.
//   - Request bodies as ZooKeeper's Java reads them: a vector count below
//     -1 is an empty vector (an empty ACL: InvalidACL), and a null ACL
//     scheme or id (kazoo sends an empty id as null) is answered as
//     ZooKeeper answers it: fine for "auth", whose id is never read,
//     InvalidACL for a scheme without a provider, MarshallingError where
//     the provider reads it (world, digest, ip) or Java's equals meets it
//     while removing duplicates. A null path in a multi fails it with
//     MarshallingError after it took its zxid, and no txn is logged:
//     replies carry the previous zxid until the next txn.
//   - Protocol errors: frames over MaxBuffer, negative lengths, a short
//     request header or a malformed connect close the connection; a
//     malformed body gets MarshallingError; an unknown opcode gets
//     Unimplemented with zxid -1 and the connection closes. Only the
//     offending connection is affected.
//   - maxClientCnxns (Config.MaxClientCnxns, default 60): a client address
//     with that many connections open has its next one closed as soon as
//     it is accepted (a reset), as ZooKeeper does.
//
// The conformance suite (conformance_test.go) runs 109 scenarios against
// real ZooKeeper and this server and compares the transcripts.
//
// # Where it differs
//
//   - Children come back sorted; ZooKeeper returns them in hash order (no
//     client may rely on either).
//   - A closing session's ephemerals are deleted in path order, and watchers
//     on several connections are notified in connection order; ZooKeeper
//     uses hash order for both.
//   - With TLS it listens with TLS only (ZooKeeper has a plain and a secure
//     port), and a client certificate its ClientCAs do not verify fails the
//     handshake under VerifyClientCertIfGiven, where ZooKeeper with
//     ssl.clientAuth=want accepts the connection without an x509 identity.
//   - No disk: Restart keeps the state in memory. No quotas, SASL,
//     membership to reconfigure (reconfig gets ReconfigDisabled, as from a
//     default ZooKeeper, or with Config.ReconfigEnabled Unimplemented, as
//     from a standalone ZooKeeper with reconfigEnabled=true) or global
//     request throttling.
//   - Output waiting for a client is bounded (see Design); ZooKeeper's
//     queue of responses to a connection is not, and it stays small under
//     a client that repeats a large read only because it serializes a
//     read's response once and shares it (its response cache).
//   - TTL nodes are enabled by default (ZooKeeper needs
//     zookeeper.extendedTypesEnabled=true); Config.DisableExtendedTypes
//     turns them off.
//   - A null string reads as empty where ZooKeeper would fail with a
//     NullPointerException in a few rarely reached places. addWatch on a
//     null path gets MarshallingError; ZooKeeper answers OK, then cannot
//     clean up when the connection closes.
//
// # Design
//
// Output is bounded by what the client reads. While more than 4 MB or
// 1,000 frames wait for a connection's writer, its reader reads no
// further request, as ZooKeeper stops reading connections with requests
// outstanding when it has too many in flight: a client that sends requests and never reads the
// replies blocks on its own writes instead of growing the server. Watch
// events, which other connections' requests trigger, are queued
// regardless; a connection with more than 64 MB queued all the same is
// closed (its session lives on), and one whose writes make no progress
// for 30 s too.
//
// A frame's buffer grows as its bytes arrive, so a declared length costs
// nothing until the data comes: a client cannot make the server allocate
// MaxBuffer per connection by declaring frames it never sends.
//
// One mutex guards the tree, sessions, watches and zxid; each connection's
// reader goroutine processes its requests one at a time under it, queueing
// replies and watch events (which are never written under the lock) for the
// connection's writer goroutine, which batches them into few writes. Time
// comes from a clock that FastForward advances: session expiry, reaping and
// ctime/mtime all use it.
package refserver
