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
//     versions and modes return an [*InputError] and the connection stays up;
//   - error classification: [IsRetryable], [IsOutcomeUnknown], [IsSessionLost].
//
// Connection loss and session loss are different things. While disconnected
// (Suspended) the session may still live on the server and its ephemeral
// nodes with it; calls fail with a retryable error. Once the session is lost,
// its ephemeral nodes are gone (or will be soon) and nothing held under it
// may be trusted any more.
package client
