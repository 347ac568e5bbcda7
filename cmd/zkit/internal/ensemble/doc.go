// Package ensemble reads the state of a ZooKeeper ensemble's servers, one
// by one, as an operator's status command shows it: each server's mode,
// last zxid, request latency, outstanding requests, connections, watches
// and version, and whether a quorum answers.
//
// It asks each server on its client port with the four-letter words srvr
// (mode, zxid, latency, outstanding requests, connections and version;
// ZooKeeper 3.5 and later answer it whatever 4lw.commands.whitelist says)
// and mntr (the watch count; answered only where the whitelist names it,
// or is "*"). Where mntr is refused, it asks the server's admin server
// (ZooKeeper 3.5 and later: HTTP, admin.serverPort, 8080 by default,
// /commands/mntr), if one answers on the server's host.
//
// A server answers srvr with its mode only while it serves: one that
// lost its quorum, or is looking for a leader, answers that it is not
// currently serving requests. A quorum answers when one server serves as
// leader, follower, observer or standalone: a member serves only while it
// is part of a quorum (a leader steps down when it loses one, a follower
// or observer follows a leader). A server in read-only mode
// (readonlymode.enabled) is cut off from its quorum, and does not count.
package ensemble
