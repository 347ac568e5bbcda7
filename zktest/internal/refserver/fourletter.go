package refserver

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Version is what the server reports as its ZooKeeper version in srvr,
// stat, mntr and envi; it parses like a real ZooKeeper's (go-zookeeper's
// FLWSrvr accepts it).
const Version = "3.8.0-zkit-refserver, built on 01/01/2025 00:00 GMT"

// fourLetterWords are the commands ZooKeeper 3.8 recognises in place of a
// first frame's length (FourLetterCommands), except stmk.
var fourLetterWords = map[string]bool{
	"conf": true, "cons": true, "crst": true, "dirs": true, "dump": true, "envi": true,
	"gtmk": true, "hash": true, "isro": true, "mntr": true, "ruok": true, "srst": true,
	"srvr": true, "stat": true, "wchc": true, "wchp": true, "wchs": true,
}

func isFourLetterWord(s string) bool { return fourLetterWords[s] }

// fourLetter runs a four-letter command and returns its output.
func (s *Server) fourLetter(cmd string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	switch cmd {
	case "ruok":
		return "imok"
	case "isro":
		return "rw"
	case "srvr":
		s.writeSrvr(&b)
	case "stat":
		fmt.Fprintf(&b, "Zookeeper version: %s\nClients:\n", Version)
		for _, c := range s.sortedConns() {
			s.writeConn(&b, c, false)
		}
		b.WriteString("\n")
		s.writeSrvr(&b)
	case "cons":
		for _, c := range s.sortedConns() {
			s.writeConn(&b, c, true)
		}
		b.WriteString("\n")
	case "mntr":
		s.writeMntr(&b)
	case "conf":
		fmt.Fprintf(&b, "clientPort=%s\n", portOf(s.addr))
		fmt.Fprintf(&b, "secureClientPort=-1\n")
		fmt.Fprintf(&b, "dataDir=/dev/null\ndataDirSize=0\ndataLogDir=/dev/null\ndataLogSize=0\n")
		fmt.Fprintf(&b, "tickTime=%d\n", s.cfg.TickTime.Milliseconds())
		fmt.Fprintf(&b, "maxClientCnxns=0\n")
		fmt.Fprintf(&b, "minSessionTimeout=%d\n", s.cfg.MinSessionTimeout.Milliseconds())
		fmt.Fprintf(&b, "maxSessionTimeout=%d\n", s.cfg.MaxSessionTimeout.Milliseconds())
		fmt.Fprintf(&b, "clientPortListenBacklog=-1\nserverId=0\n")
	case "envi":
		fmt.Fprintf(&b, "Environment:\nzookeeper.version=%s\nhost.name=localhost\n", Version)
	case "dirs":
		b.WriteString("datadir_size: 0\nlogdir_size: 0\n")
	case "gtmk":
		b.WriteString("306\n")
	case "hash":
		b.WriteString("")
	case "srst":
		s.m.reset()
		b.WriteString("Server stats reset.\n")
	case "crst":
		for c := range s.conns {
			c.received.Store(0)
			c.sent.Store(0)
		}
		b.WriteString("Connection stats reset.\n")
	case "wchs":
		fmt.Fprintf(&b, "%d connections watching %d paths\nTotal watches:%d\n",
			len(s.watchingConns()), len(s.watchedPaths()), s.dataWatches.count()+s.childWatches.count())
	case "wchc":
		byConn := map[int64][]string{}
		for _, t := range []*watchTable{s.dataWatches, s.childWatches} {
			for c, paths := range t.byConn {
				for p := range paths {
					byConn[sessionID(c)] = append(byConn[sessionID(c)], p)
				}
			}
		}
		ids := make([]int64, 0, len(byConn))
		for id := range byConn {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			fmt.Fprintf(&b, "%s\n", hexID(id))
			paths := uniq(byConn[id])
			for _, p := range paths {
				fmt.Fprintf(&b, "\t%s\n", p)
			}
		}
	case "wchp":
		for _, p := range s.watchedPaths() {
			fmt.Fprintf(&b, "%s\n", p)
			var ids []int64
			for _, t := range []*watchTable{s.dataWatches, s.childWatches} {
				for c := range t.byPath[p] {
					ids = append(ids, sessionID(c))
				}
			}
			sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
			for _, id := range ids {
				fmt.Fprintf(&b, "\t%s\n", hexID(id))
			}
		}
	case "dump":
		b.WriteString("SessionTracker dump:\n")
		ids := s.sessionIDs()
		fmt.Fprintf(&b, "Session Sets (%d):\n", len(ids))
		for _, id := range ids {
			fmt.Fprintf(&b, "\t%s\n", hexID(id))
		}
		b.WriteString("ephemeral nodes dump:\n")
		n := 0
		for _, id := range ids {
			if len(s.sessions[id].ephemerals) > 0 {
				n++
			}
		}
		fmt.Fprintf(&b, "Sessions with Ephemerals (%d):\n", n)
		for _, id := range ids {
			ss := s.sessions[id]
			if len(ss.ephemerals) == 0 {
				continue
			}
			fmt.Fprintf(&b, "%s:\n", hexID(id))
			paths := make([]string, 0, len(ss.ephemerals))
			for p := range ss.ephemerals {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				fmt.Fprintf(&b, "\t%s\n", p)
			}
		}
	}
	return b.String()
}

func (s *Server) writeSrvr(b *strings.Builder) {
	fmt.Fprintf(b, "Zookeeper version: %s\n", Version)
	fmt.Fprintf(b, "Latency min/avg/max: %s\n", s.latencyString())
	fmt.Fprintf(b, "Received: %d\n", s.m.packetsReceived.Load())
	fmt.Fprintf(b, "Sent: %d\n", s.m.packetsSent.Load())
	fmt.Fprintf(b, "Connections: %d\n", len(s.conns))
	fmt.Fprintf(b, "Outstanding: 0\n")
	fmt.Fprintf(b, "Zxid: 0x%x\n", s.zxid)
	fmt.Fprintf(b, "Mode: standalone\n")
	fmt.Fprintf(b, "Node count: %d\n", len(s.nodes))
}

func (s *Server) latencyString() string {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	avg := 0.0
	if s.m.requests > 0 {
		avg = float64(s.m.latencyTotal) / float64(s.m.requests) / float64(time.Millisecond)
	}
	return fmt.Sprintf("%d/%.1f/%d", ms(s.m.latencyMin), avg, ms(s.m.latencyMax))
}

func (s *Server) writeConn(b *strings.Builder, c *conn, full bool) {
	fmt.Fprintf(b, " /%s[1](queued=0,recved=%d,sent=%d", c.nc.RemoteAddr(), c.received.Load(), c.sent.Load())
	if full && c.session != nil {
		fmt.Fprintf(b, ",sid=%s,lop=%s,est=%d,to=%d,lcxid=0x%x,lzxid=0x%x,lresp=0,llat=0,minlat=0,avglat=0,maxlat=0",
			hexID(c.session.id), strings.ToUpper(abbrev(c.lastOp)), c.start.UnixMilli(),
			c.session.timeout.Milliseconds(), c.lastXid, c.lastZxid)
	}
	b.WriteString(")\n")
}

func (s *Server) writeMntr(b *strings.Builder) {
	eph := 0
	for _, ss := range s.sessions {
		eph += len(ss.ephemerals)
	}
	size := 0
	for p, n := range s.nodes {
		size += len(p) + len(n.data)
	}
	avg := 0.0
	if s.m.requests > 0 {
		avg = float64(s.m.latencyTotal) / float64(s.m.requests) / float64(time.Millisecond)
	}
	kv := []struct {
		k string
		v any
	}{
		{"zk_version", Version},
		{"zk_server_state", "standalone"},
		{"zk_ephemerals_count", eph},
		{"zk_num_alive_connections", len(s.conns)},
		{"zk_avg_latency", fmt.Sprintf("%.1f", avg)},
		{"zk_outstanding_requests", 0},
		{"zk_znode_count", len(s.nodes)},
		{"zk_global_sessions", len(s.sessions)},
		{"zk_non_mtls_remote_conn_count", 0},
		{"zk_last_client_response_size", -1},
		{"zk_packets_sent", s.m.packetsSent.Load()},
		{"zk_packets_received", s.m.packetsReceived.Load()},
		{"zk_max_client_response_size", -1},
		{"zk_connection_drop_probability", "0.0"},
		{"zk_watch_count", s.dataWatches.count() + s.childWatches.count()},
		{"zk_auth_failed_count", s.m.authFailed},
		{"zk_min_latency", s.m.latencyMin.Milliseconds()},
		{"zk_approximate_data_size", size},
		{"zk_local_sessions", 0},
		{"zk_uptime", time.Since(s.started).Milliseconds()},
		{"zk_max_latency", s.m.latencyMax.Milliseconds()},
		{"zk_outstanding_tls_handshake", 0},
		{"zk_min_client_response_size", -1},
		{"zk_watch_events_sent", s.m.watchEvents},
	}
	for _, e := range kv {
		fmt.Fprintf(b, "%s\t%v\n", e.k, e.v)
	}
}

func (s *Server) sortedConns() []*conn {
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (s *Server) watchingConns() map[*conn]bool {
	m := map[*conn]bool{}
	for _, t := range []*watchTable{s.dataWatches, s.childWatches} {
		for c := range t.byConn {
			m[c] = true
		}
	}
	return m
}

func (s *Server) watchedPaths() []string {
	var out []string
	for _, t := range []*watchTable{s.dataWatches, s.childWatches} {
		for p := range t.byPath {
			out = append(out, p)
		}
	}
	return uniq(out)
}

func uniq(v []string) []string {
	sort.Strings(v)
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return addr
}

// abbrev is ZooKeeper's four-letter name of the last op in cons output.
func abbrev(op string) string {
	switch op {
	case "":
		return "NA"
	case "ping":
		return "PING"
	case "create", "create2", "createContainer", "createTTL":
		return "CREA"
	case "delete":
		return "DELE"
	case "setData":
		return "SETD"
	case "getData":
		return "GETD"
	case "exists":
		return "EXIS"
	case "getChildren", "getChildren2":
		return "GETC"
	case "multi":
		return "MULT"
	case "sync":
		return "SYNC"
	}
	if len(op) > 4 {
		return op[:4]
	}
	return op
}
