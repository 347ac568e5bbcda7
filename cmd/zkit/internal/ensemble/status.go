package ensemble

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// The modes of a server that does not say one of ZooKeeper's own
// (leader, follower, observer, standalone, read-only).
const (
	Down       = "down"        // it did not answer: not running, or not reachable
	NotServing = "not serving" // it answered, but serves no clients: no quorum, or an election under way
)

// Server is what one server said of itself. Stats is nil unless it
// serves (or is in read-only mode).
type Server struct {
	Addr string `json:"server"`
	Mode string `json:"mode"`
	*Stats
	Error string `json:"error,omitempty"` // why it is down, or what of it could not be read
}

// Stats are a serving server's figures, from srvr and mntr.
type Stats struct {
	Zxid        int64   `json:"zxid"`        // the last transaction it applied
	Latency     Latency `json:"latency_ms"`  // of the requests it answered since its stats were reset
	Outstanding int64   `json:"outstanding"` // requests queued, not yet answered
	Connections int64   `json:"connections"` // client connections, the status's own included
	Watches     *int64  `json:"watches,omitempty"`
	Version     string  `json:"version"` // the server's ZooKeeper version, without its build date
}

// Latency is a server's request latency, in milliseconds.
type Latency struct {
	Min float64 `json:"min"`
	Avg float64 `json:"avg"`
	Max float64 `json:"max"`
}

func (l Latency) String() string {
	return strconv.FormatFloat(l.Min, 'f', -1, 64) + "/" + strconv.FormatFloat(l.Avg, 'f', -1, 64) + "/" +
		strconv.FormatFloat(l.Max, 'f', -1, 64)
}

// Serving reports whether the server serves clients as a member of a
// quorum (or standalone): one such server is a quorum that answers.
func (s Server) Serving() bool {
	switch s.Mode {
	case "leader", "follower", "observer", "standalone":
		return true
	}
	return false
}

// Options say how to reach the servers.
type Options struct {
	TLS       *tls.Config // talk TLS to the client port (the servers' secureClientPort)
	AdminPort int         // the port of each server's admin server, asked where mntr is refused; 0: none
}

// Report is the status of every server asked, in the order asked.
type Report struct {
	Servers []Server `json:"servers"`
	Quorum  bool     `json:"quorum"` // a server serves: a quorum answers
}

// Answered counts the servers that answered (those not Down).
func (r Report) Answered() int {
	n := 0
	for _, s := range r.Servers {
		if s.Mode != Down {
			n++
		}
	}
	return n
}

// Status asks every server at addrs (host:port, their client ports) at
// once, each until ctx ends.
func Status(ctx context.Context, addrs []string, opts Options) Report {
	r := Report{Servers: make([]Server, len(addrs))}
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Servers[i] = Query(ctx, addr, opts)
		}()
	}
	wg.Wait()
	for _, s := range r.Servers {
		r.Quorum = r.Quorum || s.Serving()
	}
	return r
}

// Query asks the server at addr for its status: srvr, then mntr for its
// watches (or its admin server's mntr, where mntr is refused).
func Query(ctx context.Context, addr string, opts Options) Server {
	s := Server{Addr: addr, Mode: Down}
	out, err := fourLetterWord(ctx, addr, "srvr", opts.TLS)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	if strings.Contains(out, "not currently serving requests") {
		s.Mode = NotServing
		return s
	}
	mode, stats, err := parseSrvr(out)
	if err != nil {
		s.Mode, s.Error = NotServing, err.Error()
		return s
	}
	s.Mode, s.Stats = mode, stats
	watches, err := watchCount(ctx, addr, opts)
	if err != nil {
		s.Error = "watches unknown: " + err.Error()
		return s
	}
	s.Watches = &watches
	return s
}

// watchCount reads the server's watch count from mntr, or from its admin
// server's where mntr is not whitelisted.
func watchCount(ctx context.Context, addr string, opts Options) (int64, error) {
	out, err := fourLetterWord(ctx, addr, "mntr", opts.TLS)
	if err != nil {
		return 0, err
	}
	if !strings.Contains(out, "not in the whitelist") {
		return mntrField(out, "zk_watch_count")
	}
	refused := "mntr is not in the server's 4lw.commands.whitelist"
	if opts.AdminPort == 0 {
		return 0, fmt.Errorf("%s (nor is an admin server to ask)", refused)
	}
	host, _, _ := net.SplitHostPort(addr)
	n, err := adminWatchCount(ctx, net.JoinHostPort(host, strconv.Itoa(opts.AdminPort)))
	if err != nil {
		return 0, fmt.Errorf("%s, and its admin server: %w", refused, err)
	}
	return n, nil
}
