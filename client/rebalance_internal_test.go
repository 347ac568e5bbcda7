package client

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// rebalance connects clients evenly to from (client i to server i mod
// len(from)), updates each to to, and returns how many end on each
// server (the first server each tries after a move, its server if it
// stays), and how many moved.
func rebalance(from, to []string, clients int, seed uint64) (per map[string]int, moved int) {
	rnd := rand.New(rand.NewPCG(seed, 1))
	per = map[string]int{}
	for i := range clients {
		r := newReconnector(from, 10*time.Second)
		current := from[i%len(from)]
		if r.update(to, current, rnd.Float64) {
			moved++
			per[r.first[0]]++
			continue
		}
		per[current]++
	}
	return per, moved
}

func servers(n int) []string {
	var s []string
	for i := 1; i <= n; i++ {
		s = append(s, fmt.Sprintf("10.0.0.%d:2181", i))
	}
	return s
}

// Clients spread evenly over three servers spread evenly over five once
// two are added, two in five of them moving, all to the added servers;
// and back over three when those two leave, only their clients moving.
// A change that leaves a client's server in place with fewer or as many
// servers moves nobody.
func TestRebalanceSpreadsClients(t *testing.T) {
	const clients = 30000
	three, five := servers(3), servers(5)
	per, moved := rebalance(three, five, clients, 1)
	assert.InDelta(t, clients*2/5, moved, clients*0.02, "moved growing from 3 to 5")
	for _, s := range five {
		assert.InDelta(t, clients/5, per[s], clients*0.02, "clients on %s after growing", s)
	}

	per, moved = rebalance(five, three, clients, 2)
	assert.Equal(t, clients*2/5, moved, "moved shrinking from 5 to 3: the clients of the two removed")
	for _, s := range three {
		assert.InDelta(t, clients/3, per[s], clients*0.02, "clients on %s after shrinking", s)
	}

	// One server replaced by another: its clients move, to the new one
	// (the kept servers keep their share).
	replaced := append(slices.Clone(three[:2]), "10.0.0.9:2181")
	per, moved = rebalance(three, replaced, clients, 3)
	assert.Equal(t, clients/3, moved)
	assert.Equal(t, clients/3, per["10.0.0.9:2181"])

	_, moved = rebalance(five, five, clients, 4)
	assert.Zero(t, moved, "the same servers")
}

// A move tries the servers of the side drawn first, then every other
// server; a client that is not connected only takes the new list.
func TestRebalanceTriesEveryServer(t *testing.T) {
	r := newReconnector(servers(3), 10*time.Second)
	assert.True(t, r.update(servers(2), "10.0.0.3:2181", rand.Float64))
	var tried []string
	for range 2 {
		s, _ := r.attempt()
		tried = append(tried, s)
	}
	slices.Sort(tried)
	assert.Equal(t, servers(2), tried)

	r = newReconnector(servers(3), 10*time.Second)
	assert.False(t, r.update(servers(5), "", rand.Float64))
	assert.ElementsMatch(t, servers(5), r.servers)
	assert.Empty(t, r.first)
}

// A configuration's client addresses: its client host, or its quorum
// host where that is a wildcard or missing; no address for a server
// without a client port; the version, hexadecimal.
func TestClientServers(t *testing.T) {
	got, version := clientServers([]byte(`server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181
server.2=10.0.0.2:2888:3888:observer;10.0.0.20:2182
server.3=10.0.0.3:2888:3888;2183
server.4=10.0.0.4:2888:3888:participant
server.5=[fe80::1]:2888:3888:participant;[::]:2185
server.6=10.0.0.6:2888:3888:participant;10.0.0.6:notaport
version=100000003
`))
	assert.Equal(t, []string{"10.0.0.1:2181", "10.0.0.20:2182", "10.0.0.3:2183", "[fe80::1]:2185"}, got)
	assert.Equal(t, int64(0x100000003), version)
	got, version = clientServers(nil)
	assert.Empty(t, got)
	assert.Zero(t, version)
}
