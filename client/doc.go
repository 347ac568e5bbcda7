// Package client is zkit's ZooKeeper client. It speaks ZooKeeper's wire
// protocol itself (with the codec in internal/jute), one connection at a
// time per client, and it is the only package in zkit that talks to the
// servers.
//
// What it offers:
//
//   - a context.Context on every call: cancelling returns promptly with the
//     context's error, even while the server is unreachable;
//   - the session as a value: [Client.Session] returns the current [Session],
//     whose Done channel and Context end when that session is lost (expired
//     on the server, disconnected for longer than the session timeout, or the
//     client closed). After a loss the client opens a new session; that is a
//     new Session value, and everything created under the old one is told it
//     is gone;
//   - events in order, none dropped unsaid: any number of subscribers see
//     every state change (Connected, Suspended, Reconnected, Lost, Closed,
//     AuthFailed) and every watch event, each through its own queue; a
//     subscriber that falls further behind than [WithSubscriptionBuffer]
//     loses its subscription ([ErrSubscriptionOverflow]), not the client
//     its memory;
//   - zxid tracking ([Client.LastZxid], the zxid of every reply, writes and
//     reads alike) and read-your-writes across clients ([Client.CatchUp]);
//   - the rest of ZooKeeper 3.5-3.9's API: persistent and recursive
//     watches as feeds ([Client.Watch]) that say when to read again after
//     a reconnect, [Client.RemoveWatches], creates that return their Stat
//     ([Client.CreateStat]), reads in one request ([Client.MultiRead]),
//     [Client.Ephemerals], [Client.AllChildrenNumber], [Client.WhoAmI] and
//     [Client.GetConfig];
//   - protected ephemeral-sequential creates ([Client.CreateProtected]) in
//     Curator's `_c_<uuid>-<name>` format, that survive a lost reply without
//     leaving a second node;
//   - validation before anything is sent: bad paths, oversize data, bad
//     versions and modes, malformed ACLs ([ValidateACL]) return an
//     [*InputError] and the connection stays up;
//   - TLS ([WithTLS]) under any dialer, with client certificates for
//     ZooKeeper's x509 authentication ([X509ACL]), and a Connect that says
//     at once when a certificate is not trusted;
//   - error classification: [IsRetryable], [IsOutcomeUnknown], [IsSessionLost];
//   - replies too long to read, typed and survived: ZooKeeper bounds
//     requests (jute.maxbuffer) but not its replies, and a node whose
//     children's names add up to more than the client reads (64 KiB more
//     than WithMaxBuffer, about 1.1 MB by default) answers Children so. The
//     call fails with a [*ReplyTooLargeError] naming the limit, which no
//     retry loop retries (the same call gets the same reply); the reply is
//     skipped, and the connection, the session and every other call go on.
//     A Multi whose reply could be that long is refused before it is sent;
//   - cheap calls: every call is written on the session's connection by its
//     caller and answered on the caller's own goroutine (see direct.go and
//     conn.go), so that a context costs nothing per call and a watch no
//     goroutine (watch.go). An idle client runs one goroutine.
//
// Connection loss and session loss are different things. While disconnected
// (Suspended) the session may still live on the server and its ephemeral
// nodes with it; calls fail at once with a retryable error (matching
// ErrNoServer), and a call cut off by the disconnect fails with
// ErrConnectionClosed: an *OutcomeUnknownError for a write that was sent,
// a retryable error for any call that was not (one that still waited for
// the credentials sent again on a new connection, or whose request could
// not be written). A call that was not sent is never sent later, AddAuth
// included. Once the session is lost, its ephemeral nodes are gone (or will
// be soon) and nothing held under it may be trusted any more.
//
// # The connection
//
// On each connection the client sends, in this order, as ZooKeeper's Java
// client does: the connect request, which resumes the session and carries
// the highest zxid the client has seen in a reply (a server that has not
// seen that zxid yet refuses the session, so that no read goes back in
// time); the credentials added so far ([WithAuth], [Client.AddAuth]);
// SetWatches (SetWatches2 when there are persistent watches), which sets
// the session's watches again relative to that zxid (the server fires at
// once the one-shot watches whose node changed since); and only then
// calls, once the server has answered the credentials. Replies are matched
// to their calls by xid; ZooKeeper answers a session's requests in order.
//
// # Reconnecting and its timing
//
// With a session timeout T, the client pings every T/3 and gives up on a
// silent connection after 2T/3, as ZooKeeper's Java client does; it is
// then Suspended. It tries the next server at once, and then again after a
// jittered delay that starts at 10 ms and doubles up to T/10, at most
// 500 ms (see reconnect.go). An attempt gives a server a second to accept
// the connection and T/3 (at least a second) to answer it; a session is
// resumed with the timeout the server negotiated for it. So a session survives a partition as long as
// the server has not expired it, which it does between T and T plus one
// tickTime after it last heard from the client; and when the server ends a
// session the client learns of it within a round trip of reaching a server
// again.
//
// The client declares a session lost by itself once it has been Suspended
// for T: the server will have expired it by then (or will, within a tick).
// A session declared lost is never resumed: if a server still has it when
// the client reconnects (servers revive sessions with fresh timeouts after
// a restart or a quorum loss), the client asks for a new session and lets
// the old one expire, ephemeral nodes and all, rather than keep nodes alive
// whose holders were told they are gone. (Curator does the same when it
// declares a session lost: it injects an expiry into its ZooKeeper handle.)
//
// # When the ensemble changes
//
// ZooKeeper 3.5 and later can change an ensemble's membership while it
// runs (Reconfig). UpdateServers gives the client the new servers and
// moves its connection, on the same session, off a server that left, and
// to added servers with the probability that keeps clients spread evenly
// (see rebalance.go); WithEnsembleTracker does it by itself whenever the
// configuration in ConfigNode changes, as Curator's EnsembleTracker does.
//
// # Why zkit speaks the protocol itself
//
// Speaking the protocol itself, rather than wrapping another Go client,
// the client keeps every call to the connection it was written on, never
// sends a request of an old connection on a new one, sets watches again
// before any call of a new connection, and costs nothing per call for its
// context. The repository's docs/design.md tells how zkit came to it.
package client
