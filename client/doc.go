// Package client is zkit's thin wrapper over github.com/go-zookeeper/zk. It is
// the only package in zkit that talks to the wire client.
//
// What it adds to the wire client:
//
//   - a context.Context on every call: cancelling returns promptly with the
//     context's error, even while the server is unreachable;
//   - the session as a value: [Client.Session] returns the current [Session],
//     whose Done channel and Context end when that session is lost (expired
//     on the server, disconnected for longer than the session timeout, or the
//     client closed). After a loss the wire client silently opens a new
//     session; that is a new Session value, and everything created under the
//     old one is told it is gone;
//   - events that are never dropped: any number of subscribers see every
//     state change (Connected, Suspended, Reconnected, Lost, Closed) and every
//     watch event, each through its own unbounded queue;
//   - zxid tracking ([Client.LastZxid]) and read-your-writes across clients
//     ([Client.CatchUp]);
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
//   - cheap calls: calls and watches are written on the session's
//     connection by the client itself and answered on the caller's own
//     goroutine (see direct.go and watch.go), so that a context costs
//     nothing per call and a watch no goroutine; the wire client keeps the
//     handshake, pings and credentials.
//
// Connection loss and session loss are different things. While disconnected
// (Suspended) the session may still live on the server and its ephemeral
// nodes with it; calls fail at once with a retryable error (matching
// ErrNoServer), and a call cut off by the disconnect fails with
// ErrConnectionClosed: an *OutcomeUnknownError for a write that was sent,
// a retryable error for any call that was not (one that still waited for
// the credentials sent again on a new connection, or whose request could
// not be written). A call that was not sent is never sent later. Once the
// session is lost, its ephemeral nodes are gone (or will be soon) and
// nothing held under it may be trusted any more.
//
// [Client.AddAuth] is the one call the wire client makes, and the wire
// client keeps a request it was handed until it is answered or the client
// closed: an AddAuth that ended with its context, or with a retryable error
// because a disconnect caught it in the wire client's send queue, may still
// take effect when that request goes out (on the next connection). Adding
// the same credentials again is harmless: make the call again. Lifting that
// would take a fork of the wire client.
//
// # Reconnecting and its timing
//
// With a session timeout T, the client pings every T/3 and gives up on a
// silent connection after 2T/3 (go-zookeeper's timings); it is then
// Suspended. It tries the next server at once, and then again after a
// jittered delay that starts at 10 ms and doubles up to T/10, at most
// 500 ms (go-zookeeper itself pauses a full second each time it has tried
// every server, which with one server leaves a session behind a short
// partition only about T/3 - 1 s to reconnect in). So a session survives a
// partition as long as the server has not expired it, which it does between
// T and T plus one tickTime after it last heard from the client; and when
// the server ends a session the client learns of it within a round trip of
// the connection closing.
//
// The client declares a session lost by itself once it has been Suspended
// for T: the server will have expired it by then (or will, within a tick).
// A session declared lost is never resumed: if a server still has it when
// the client reconnects (servers revive sessions with fresh timeouts after
// a restart or a quorum loss), the client asks for a new session and lets
// the old one expire, ephemeral nodes and all, rather than keep nodes alive
// whose holders were told they are gone.
package client
