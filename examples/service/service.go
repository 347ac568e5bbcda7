package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/election"
)

// serviceName is the name the instances register under in discovery.
const serviceName = "worker"

// Settings is the service's configuration, published with configwatch
// (zkit config ROOT/config set interval_ms=500).
type Settings struct {
	IntervalMS int `json:"interval_ms"` // how often the leader assigns work
}

// defaultInterval applies until a configuration says otherwise.
const defaultInterval = time.Second

// Assignment is what the leader records on each round: which peer does
// the next piece of work, by whose order.
type Assignment struct {
	Leader string `json:"leader"` // the leader's instance id
	Token  int64  `json:"token"`  // the leader's fencing token
	Peer   string `json:"peer"`   // the instance the work goes to
}

// Service is one instance of the service.
type Service struct {
	c    *client.Client
	root string
	self discovery.Instance
	log  *slog.Logger

	settings atomic.Pointer[Settings]
	term     atomic.Pointer[election.Term] // while leading
	peers    *discovery.Provider           // set by Run
	work     *cache.Cache                  // set by Run
}

// New returns an instance of the service under root, known to its peers
// as self (self.Name is set to serviceName). It does no I/O.
func New(c *client.Client, root string, self discovery.Instance, log *slog.Logger) *Service {
	self.Name = serviceName
	return &Service{c: c, root: root, self: self, log: log.With("id", self.ID)}
}

func (s *Service) assignmentPath() string { return s.root + "/work/assignment" }

// Run runs the instance until ctx ends, then stops leading and
// unregisters, so that its peers stop picking it and another instance
// leads at once instead of after the session timeout. It returns nil
// then, or the error that kept the instance from starting.
func (s *Service) Run(ctx context.Context) error {
	if err := s.c.EnsurePath(ctx, s.assignmentPath()); err != nil {
		return err
	}
	// Discovery: the instance is registered (again under every new
	// session) until it unregisters; the provider picks peers from a live
	// view of the registered instances, this one included.
	d := discovery.New(s.c, s.root+"/instances")
	reg, err := d.Register(ctx, s.self)
	if err != nil {
		return err
	}
	defer func() {
		stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := reg.Unregister(stop); err != nil {
			s.log.Warn("unregister", "err", err)
		} else {
			s.log.Info("unregistered")
		}
	}()
	s.peers = d.Provider(ctx, serviceName)

	// The work node mirrored in memory, for reads that cost no request.
	s.work, err = cache.OpenTree(ctx, s.c, s.root+"/work")
	if err != nil {
		return err
	}
	defer s.work.Close()

	go s.followSettings(ctx)

	// Campaign, lead while elected, campaign again after a lost term, and
	// resign once ctx ends.
	err = election.New(s.c, s.root+"/election", s.self.ID).Run(ctx, s.lead)
	s.log.Info("left the election", "err", err)
	return err
}

// followSettings keeps the latest complete configuration until ctx ends.
func (s *Service) followSettings(ctx context.Context) {
	feed := configwatch.New(s.c, s.root+"/config", configwatch.JSON[Settings]).Watch(ctx)
	for snap := range feed.Values() {
		if snap.Err != nil {
			s.log.Warn("bad settings, keeping the last good ones", "err", snap.Err)
			continue
		}
		s.settings.Store(&snap.Value)
		s.log.Info("settings", "interval_ms", snap.Value.IntervalMS)
	}
}

func (s *Service) interval() time.Duration {
	if st := s.settings.Load(); st != nil && st.IntervalMS > 0 {
		return time.Duration(st.IntervalMS) * time.Millisecond
	}
	return defaultInterval
}

// lead is the leader's work: a round each interval, until the term ends
// (ctx ends with it) or the instance stops.
func (s *Service) lead(ctx context.Context, term *election.Term) error {
	s.term.Store(term)
	defer s.term.Store(nil)
	s.log.Info("leading", "token", term.Token())
	for {
		if a, err := s.assign(ctx, term); err != nil {
			if ctx.Err() != nil {
				return nil // the term ended, or the instance stops
			}
			s.log.Warn("round failed", "err", err)
		} else {
			s.log.Info("assigned", "peer", a.Peer, "token", a.Token)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.interval()):
		}
	}
}

// assign picks a peer and records the assignment, fenced by term: the
// server applies the write only while the term's node exists, so a
// leader that lost its term, and may not know it yet, never overwrites
// its successor's work. Then it reads its write back from the cache.
func (s *Service) assign(ctx context.Context, term *election.Term) (Assignment, error) {
	peer, err := s.peers.Pick(ctx)
	if err != nil {
		return Assignment{}, err
	}
	data, err := json.Marshal(Assignment{Leader: s.self.ID, Token: term.Token(), Peer: peer.ID})
	if err != nil {
		return Assignment{}, err
	}
	if _, err := term.Multi(ctx, client.SetOp(s.assignmentPath(), data, -1)); err != nil {
		return Assignment{}, err
	}
	return s.Current(ctx, s.c.LastZxid())
}

// Current is the latest assignment as the cache holds it, once the cache
// has caught up with zxid: pass a writer's LastZxid after its write to
// read that write (0 reads whatever the cache holds).
func (s *Service) Current(ctx context.Context, zxid int64) (Assignment, error) {
	snap, err := s.work.WaitFor(ctx, zxid)
	if err != nil {
		return Assignment{}, err
	}
	var a Assignment
	n, ok := snap.Get(s.assignmentPath())
	if !ok || len(n.Data) == 0 {
		return a, errors.New("no assignment yet")
	}
	if err := json.Unmarshal(n.Data, &a); err != nil {
		return a, fmt.Errorf("assignment at zxid %#x: %w", snap.Zxid(), err)
	}
	return a, nil
}

// Leading is the instance's current term, or nil when it does not lead.
func (s *Service) Leading() *election.Term { return s.term.Load() }
