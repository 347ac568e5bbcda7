package refserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Server is a running reference server. Its methods are safe for concurrent
// use.
type Server struct {
	cfg   Config
	clock clock

	// mu guards the data tree, sessions, watches, connections and zxid.
	// Requests are processed one at a time under it; it is never held
	// across a network write.
	mu           sync.Mutex
	nodes        map[string]*node
	sessions     map[int64]*session
	nextSession  int64
	zxid         int64 // the last logged: replies carry it
	takenZxid    int64 // the last taken: zxid unless unlogZxid
	prevZxid     int64 // zxid before the last takeZxid
	dataWatches  *watchTable
	childWatches *watchTable
	containers   map[string]struct{}
	ttls         map[string]struct{}
	conns        map[*conn]struct{}
	connsFrom    map[string]int // open connections by client IP address
	nextConnID   uint64
	nextReap     time.Time
	dropMatch    func(op, path string) bool
	m            metrics

	// Faults.
	latency atomic.Int64 // time.Duration
	pmu     sync.Mutex
	paused  chan struct{} // non-nil while paused; closed by Resume

	// Lifecycle.
	rmu     sync.Mutex // held by Restart: one restart at a time
	lmu     sync.Mutex
	ln      net.Listener
	addr    string
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup // connection goroutines
	bgwg    sync.WaitGroup // accept loop and ticker
	started time.Time
}

// ErrClosed is returned by Restart on a closed server.
var ErrClosed = errors.New("refserver: server closed")

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves until
// Close.
func Start(addr string, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:          cfg,
		clock:        clock{base: cfg.Now},
		nodes:        newTree(),
		sessions:     map[int64]*session{},
		dataWatches:  newWatchTable(),
		childWatches: newWatchTable(),
		containers:   map[string]struct{}{},
		ttls:         map[string]struct{}{},
		conns:        map[*conn]struct{}{},
		connsFrom:    map[string]int{},
		stop:         make(chan struct{}),
		started:      time.Now(),
	}
	now := s.clock.now()
	s.nextSession = nextSessionID(now)
	s.nextReap = now.Add(cfg.ContainerCheckInterval)
	ln, err := s.listen(addr)
	if err != nil {
		return nil, err
	}
	s.ln, s.addr = ln, ln.Addr().String()
	s.bgwg.Add(2)
	go s.acceptLoop(ln)
	go s.tickLoop()
	cfg.Logger.Info("reference server listening", "addr", s.addr)
	return s, nil
}

// listen opens the server's listener on addr, with TLS if configured.
func (s *Server) listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil || s.cfg.TLS == nil {
		return ln, err
	}
	return tls.NewListener(ln, s.cfg.TLS), nil
}

// Addr returns the address the server listens on (host:port).
func (s *Server) Addr() string {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	return s.addr
}

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.bgwg.Done()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return
		}
		delay = 0
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		s.lmu.Lock()
		if s.closed || s.ln != ln {
			s.lmu.Unlock()
			nc.Close()
			return
		}
		s.wg.Add(1)
		s.lmu.Unlock()
		ip := remoteIP(nc)
		s.mu.Lock()
		if limit := s.cfg.MaxClientCnxns; limit > 0 && s.connsFrom[ip] >= limit {
			s.mu.Unlock()
			s.wg.Done()
			s.cfg.Logger.Warn("too many connections from one address", "client", ip, "max", limit)
			hardClose(nc)
			continue
		}
		s.nextConnID++
		c := newConn(s, nc, s.nextConnID, ip)
		s.conns[c] = struct{}{}
		s.connsFrom[ip]++
		s.mu.Unlock()
		go c.serve()
	}
}

// remoteIP is the address a connection comes from, without its port.
func remoteIP(nc net.Conn) string {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ""
}

// hardClose closes a connection at once, discarding what is buffered (a
// reset, as ZooKeeper closes a connection it refuses).
func hardClose(nc net.Conn) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	nc.Close()
}

// tickInterval is how often the server looks for expired sessions.
func (s *Server) tickInterval() time.Duration {
	return min(max(s.cfg.TickTime/4, 5*time.Millisecond), 250*time.Millisecond)
}

func (s *Server) tickLoop() {
	defer s.bgwg.Done()
	t := time.NewTicker(s.tickInterval())
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		now := s.clock.now()
		s.expireSessions(now)
		if !now.Before(s.nextReap) {
			s.reap(now)
			s.nextReap = now.Add(s.cfg.ContainerCheckInterval)
		}
		s.mu.Unlock()
	}
}

// reap deletes empty containers that once had a child and TTL nodes without
// children that have not changed for longer than their TTL, each in its own
// txn (ContainerManager). Caller holds s.mu.
func (s *Server) reap(now time.Time) {
	var doomed []string
	for p := range s.containers {
		if n := s.nodes[p]; n != nil && len(n.children) == 0 && n.cversion > 0 {
			doomed = append(doomed, p)
		}
	}
	ms := now.UnixMilli()
	for p := range s.ttls {
		n := s.nodes[p]
		if n == nil || len(n.children) > 0 {
			continue
		}
		if ttl := ttlOf(n.owner); ttl != 0 && ms-n.mtime > ttl {
			doomed = append(doomed, p)
		}
	}
	sortStrings(doomed)
	for _, p := range doomed {
		s.takeZxid()
		tx := s.newTxn()
		if s.doDeleteContainer(tx, p) == jute.ErrOK {
			s.commit(tx)
		}
	}
}

// Close stops the server: the listener and every connection are closed and
// all goroutines have ended when it returns. Sessions die with it.
func (s *Server) Close() error {
	s.lmu.Lock()
	if s.closed {
		s.lmu.Unlock()
		return nil
	}
	s.closed = true
	ln := s.ln
	close(s.stop)
	s.lmu.Unlock()
	s.Resume()
	var err error
	if ln != nil { // nil while a Restart is between listeners
		err = ln.Close()
	}
	s.dropAll()
	s.bgwg.Wait()
	s.wg.Wait()
	return err
}

// dropAll closes every connection and waits for their goroutines.
func (s *Server) dropAll() {
	s.mu.Lock()
	for c := range s.conns {
		c.abort()
	}
	s.mu.Unlock()
}

// Restart simulates a server restart on the same address: every connection
// is dropped and the listener closed, then the server listens again with its
// state kept. Sessions survive and get a fresh timeout, as when ZooKeeper
// reloads them from its logs.
func (s *Server) Restart() error {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.lmu.Lock()
	if s.closed {
		s.lmu.Unlock()
		return ErrClosed
	}
	old := s.ln
	s.ln = nil
	s.lmu.Unlock()
	old.Close()
	// Wait for the accept loop (the ticker keeps running) and every
	// connection to end.
	s.mu.Lock()
	for c := range s.conns {
		c.abort()
	}
	s.mu.Unlock()
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ {
		ln, err = s.listen(s.addr)
		if err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("refserver: restart: %w", err)
	}
	s.mu.Lock()
	now := s.clock.now()
	for _, ss := range s.sessions {
		s.touch(ss, now)
	}
	s.mu.Unlock()
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if s.closed {
		ln.Close()
		return ErrClosed
	}
	s.ln = ln
	s.bgwg.Add(1)
	go s.acceptLoop(ln)
	s.cfg.Logger.Info("reference server restarted", "addr", s.addr)
	return nil
}
