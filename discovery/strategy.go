package discovery

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Strategy picks the instance a Provider returns, out of the instances it
// may return now (enabled, passing its filters, not noted down), sorted by
// node name. It reports false when it picks none; it is never called with
// an empty list. A Strategy is used by one Provider at a time and must be
// safe for concurrent use. The strategies are Curator's: RoundRobin (the
// default), Random and Sticky.
type Strategy interface {
	Pick(instances []Instance) (Instance, bool)
}

// RoundRobin returns a strategy that takes the instances in turn
// (Curator's RoundRobinStrategy): the n-th pick is instances[n % len].
// While the instances stay the same each is picked once per round.
func RoundRobin() Strategy { return &roundRobin{} }

type roundRobin struct{ next atomic.Uint64 }

func (r *roundRobin) Pick(instances []Instance) (Instance, bool) {
	if len(instances) == 0 {
		return Instance{}, false
	}
	n := r.next.Add(1) - 1
	return instances[n%uint64(len(instances))], true
}

// Random returns a strategy that picks an instance at random, each as
// likely (Curator's RandomStrategy).
func Random() Strategy { return random{} }

type random struct{}

func (random) Pick(instances []Instance) (Instance, bool) {
	if len(instances) == 0 {
		return Instance{}, false
	}
	return instances[rand.IntN(len(instances))], true
}

// Sticky returns a strategy that keeps returning the instance master
// picked, for as long as it may be returned, then lets master pick another
// (Curator's StickyStrategy). The instance is the same node (Path; Name
// and ID for instances not read from ZooKeeper): its data may change in
// between, and Sticky returns it as it is now, where Curator compares
// every field and picks anew after an update. A nil master is
// RoundRobin(), as for WithStrategy.
func Sticky(master Strategy) Strategy {
	if master == nil {
		master = RoundRobin()
	}
	return &sticky{master: master}
}

type sticky struct {
	master Strategy

	mu   sync.Mutex
	ours string // the key of the instance stuck to; "" when none
}

func (s *sticky) Pick(instances []Instance) (Instance, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ours != "" {
		for _, inst := range instances {
			if key(inst) == s.ours {
				return inst, true
			}
		}
	}
	inst, ok := s.master.Pick(instances)
	s.ours = ""
	if ok {
		s.ours = key(inst)
	}
	return inst, ok
}

// key identifies an instance across reads: its node, or its name and id.
func key(inst Instance) string {
	if inst.Path != "" {
		return inst.Path
	}
	return inst.Name + "/" + inst.ID
}
