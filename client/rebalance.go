package client

import (
	"math/rand/v2"
	"slices"
)

// Rebalancing after a change of the ensemble's membership.
//
// Clients given the same servers spread evenly over them: each tries them
// in an order of its own (reconnect.go). When the ensemble changes, a
// client given the new servers must keep that spread without every client
// moving at once: it moves only as much as the change asks, by a draw of
// its own (the method of ZooKeeper's Java client, from Shraer et al.,
// "Dynamic Reconfiguration of Primary/Backup Clusters", USENIX ATC 2012).
// With m servers before and n after, of which k were there before (kept)
// and n-k are new (added):
//
//   - more servers (n > m): a client whose server stays moves with
//     probability 1 - m/n, to an added server: each server then expects
//     1/n of the clients. A client whose server left moves to an added
//     server.
//   - as many or fewer (n <= m): a client whose server stays stays. One
//     whose server left moves, to a kept server with probability
//     k(m-n) / (n(m-k)), else to an added one: each kept server's share
//     grows from 1/m to 1/n, and the added servers take the rest.
//
// A move is a reconnection of the same session: the client closes its
// connection, then tries the servers of the side it drew first (in a
// shuffled order, drawing again at each attempt while both sides have
// servers left), then the others as usual.

// UpdateServers replaces the servers the client connects to (Connect's)
// with servers, "host:port" each, as ZooKeeper's Java client's
// updateServerList does after a reconfiguration, and reports whether the
// client moves its connection to rebalance the load (see above): at once
// when the server it is connected to is not among servers (compared as
// written: "localhost:2181" is not "127.0.0.1:2181"), and by a draw of
// its own when servers were added. A move closes the connection and
// connects to another server, on the same session: subscribers see
// StateSuspended then StateReconnected, calls under way on the connection
// fail as on any disconnection (a write's outcome unknown), and the
// session, its ephemeral nodes and its watches live on. A client that is
// not connected just tries the new servers. WithEnsembleTracker calls it
// whenever the ensemble's configuration changes. An empty list is an
// *InputError.
func (c *Client) UpdateServers(servers []string) (moved bool, err error) {
	var list []string
	for _, s := range servers {
		if s == "" {
			return false, &InputError{Op: "update servers", Reason: "empty server address"}
		}
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	if len(list) == 0 {
		return false, &InputError{Op: "update servers", Reason: "no servers given"}
	}
	cn := c.cur.Load()
	current := ""
	if cn != nil {
		current = cn.addr
	}
	if !c.reconn.update(list, current, rand.Float64) {
		return false, nil
	}
	c.log.Info("zkit: moving to rebalance the ensemble's clients", "from", current)
	cn.nc.Close() // the session loop connects to the server drawn
	return true, nil
}

// Servers returns the servers the client connects to: Connect's, or the
// last UpdateServers'.
func (c *Client) Servers() []string {
	c.reconn.mu.Lock()
	defer c.reconn.mu.Unlock()
	return slices.Clone(c.reconn.servers)
}

// update makes servers the list, for a client connected to current (""
// when it is not), and reports whether it is to move; draw returns a
// number in [0, 1).
func (r *reconnector) update(servers []string, current string, draw func() float64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := slices.Clone(servers)
	rand.Shuffle(len(next), func(i, j int) { next[i], next[j] = next[j], next[i] })
	var kept, added []string
	for _, s := range next {
		if slices.Contains(r.servers, s) {
			kept = append(kept, s)
		} else {
			added = append(added, s)
		}
	}
	m, n, k := float64(len(r.servers)), float64(len(next)), float64(len(kept))
	stays := slices.Contains(next, current)
	toKept := -1.0 // the probability of moving to a kept server; below 0, no move
	switch {
	case current == "":
	case n > m && stays:
		if draw() < 1-m/n {
			toKept = 0
		}
	case n > m:
		toKept = 0
	case !stays && m > k:
		toKept = k * (m - n) / (n * (m - k))
	case !stays: // connected to a server that was not listed either
		toKept = k / n
	}
	r.servers, r.next, r.first = next, 0, nil
	if i := slices.Index(next, current); i >= 0 {
		r.next = (i + 1) % len(next)
	}
	if toKept < 0 {
		return false
	}
	for len(kept)+len(added) > 0 {
		if len(added) == 0 || len(kept) > 0 && draw() < toKept {
			r.first, kept = append(r.first, kept[0]), kept[1:]
		} else {
			r.first, added = append(r.first, added[0]), added[1:]
		}
	}
	return true
}
