package chaos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// barrierLoad runs double barrier rounds on one path: every worker enters,
// stays a moment and leaves, in a loop, with as many members as workers.
// Faults make some calls fail (a write whose reply is lost, a member
// that gave up); the member then starts over, and the others must be told,
// not left waiting: the rounds must go on (the scenario waits for
// progress after every fault). It checks:
//
//   - no Enter returns before the threshold: while it ran, at least count
//     members (itself included) were inside or entering. A member counts
//     from its Enter call until its Leave returned; after a failed call
//     its node may still be deleted in the background, so it counts on
//     until its next successful Leave;
//   - once the load stops, no member node is left behind.
type barrierLoad struct {
	path    string
	admin   *client.Client
	workers []*worker
	prog    *Progress // also the clock of the intervals

	mu       sync.Mutex
	present  map[int][]interval // per member: from Enter called to Leave returned
	entries  []entry            // successful Enter calls
	rounds   atomic.Int64       // member rounds with Enter and Leave both successful
	failures atomic.Int64
	lostSeen atomic.Int64 // Leave calls told a member was lost
}

type interval struct{ from, to int64 } // to: math.MaxInt64 while open

type entry struct {
	member   int
	from, to int64
}

func newBarrierLoad(t *testing.T, admin *client.Client, workers []*worker, prog *Progress) *barrierLoad {
	t.Helper()
	return &barrierLoad{path: loadPath(t, admin, "barrier", prog) + "/b", admin: admin, workers: workers, prog: prog,
		present: map[int][]interval{}}
}

func (l *barrierLoad) Name() string { return "barrier" }

func (l *barrierLoad) Workers() []*worker { return l.workers }

func (l *barrierLoad) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, w := range l.workers {
		wg.Go(func() { l.member(ctx, w) })
	}
	wg.Wait()
}

func (l *barrierLoad) member(ctx context.Context, w *worker) {
	var b client.Backoff
	for ctx.Err() == nil {
		d := barrier.NewDouble(w.c, l.path, len(l.workers))
		from := l.prog.Now()
		l.open(w.id, from)
		err := d.Enter(ctx)
		if err == nil {
			l.entered(w.id, from, l.prog.Now())
			time.Sleep(time.Millisecond)
			err = d.Leave(ctx)
		}
		switch {
		case err == nil:
			l.close(w.id, l.prog.Now())
			l.rounds.Add(1)
			l.prog.Done("barrier")
			b.Reset()
			// Members arrive at different times, so that one let through
			// early would be seen with fewer than count present.
			time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
		case ctx.Err() != nil:
		default:
			// Counted as present until its next successful Leave.
			l.failures.Add(1)
			if errors.Is(err, barrier.ErrMemberLost) {
				l.lostSeen.Add(1)
			}
			b.Wait(ctx)
		}
	}
}

// open starts a presence interval for member m, unless one is still open
// (after a failed call).
func (l *barrierLoad) open(m int, at int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	iv := l.present[m]
	if len(iv) == 0 || iv[len(iv)-1].to != math.MaxInt64 {
		l.present[m] = append(iv, interval{at, math.MaxInt64})
	}
}

func (l *barrierLoad) close(m int, at int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.present[m][len(l.present[m])-1].to = at
}

func (l *barrierLoad) entered(m int, from, to int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, entry{m, from, to})
}

// earlyEntries returns the entries during which fewer than count members
// (each with its presence intervals) were inside or entering.
func earlyEntries(entries []entry, present map[int][]interval, count int) []string {
	var early []string
	for _, e := range entries {
		n := 0
		for _, ivs := range present {
			for _, iv := range ivs {
				if iv.from <= e.to && iv.to >= e.from {
					n++
					break
				}
			}
		}
		if n < count {
			early = append(early, fmt.Sprintf("member %d's Enter returned with only %d of %d members inside or entering", e.member, n, count))
		}
	}
	return early
}

func (l *barrierLoad) Check(t *testing.T) (ops, violations int, held string) {
	t.Helper()
	for _, v := range earlyEntries(l.entries, l.present, len(l.workers)) {
		t.Errorf("barrier: %s", v)
		violations++
	}
	// Every member node goes: at once, or in the background after a
	// failed call.
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		var members []string
		for _, name := range children(t, l.admin, l.path) {
			if name != "ready" {
				members = append(members, name)
			}
		}
		if len(members) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("barrier: member nodes left behind: %v", members)
			violations++
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	held = fmt.Sprintf("barrier: %d member rounds, %d failed calls started over (%d told a member was lost); nobody through early, no member node left",
		l.rounds.Load(), l.failures.Load(), l.lostSeen.Load())
	return len(l.entries), violations, held
}
