package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/zktest"
)

// candidates is the anchors' W5_failover point.
const candidates = 8

// BenchmarkElection is the anchors' W5_failover: 8 candidates, the leader
// steps down as soon as it leads and rejoins at the back (Term.Requeue:
// the delete and the next create in one transaction). One op is one
// term; p50 and p99 run from the step-down to the start of the next term.
func BenchmarkElection(b *testing.B) {
	b.Run(fmt.Sprintf("candidates=%d", candidates), func(b *testing.B) {
		measure(b, workload.Election(), candidates, "failovers/s")
	})
}

// BenchmarkElectionGozk is the in-run baseline: the anchors' election on
// go-zookeeper's zk.Lock (Unlock, then the next Lock's return).
func BenchmarkElectionGozk(b *testing.B) {
	b.Run(fmt.Sprintf("candidates=%d", candidates), func(b *testing.B) {
		measure(b, workload.GozkFailover(), candidates, "failovers/s")
	})
}

// crashTimeout is the candidates' session timeout in the crash
// benchmarks: twice ZooKeeper's default tickTime, its smallest.
const crashTimeout = 4 * time.Second

// BenchmarkElectionCrash times the failover after the leader crashes,
// with 8 candidates (-benchtime 5x: the silent case takes a session
// timeout per op):
//
//   - expired: the leader's session is expired on the server (as when
//     another client takes it over and closes it); from the expiry request
//     to the next term;
//   - silent: the leader's connection goes silent (a dead process, a cut
//     cable), and the server expires its session after the timeout; from
//     the cut to the next term, also reported as a multiple of the
//     session timeout (x-timeout).
func BenchmarkElectionCrash(b *testing.B) {
	b.Run("expired", func(b *testing.B) { crashFailover(b, false) })
	b.Run("silent", func(b *testing.B) { crashFailover(b, true) })
}

func crashFailover(b *testing.B, silent bool) {
	srv := servers(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := freshPath(b, connectN(b, srv, 1)[0], "crash") + "/election"
	type lead struct {
		term  *election.Term
		proxy *zktest.Proxy
	}
	leaders := make(chan lead, candidates)
	for i := range candidates {
		p := zktest.NewProxy(b, srv[0])
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		c, err := client.Connect(cctx, srv, client.WithDialer(p.Dialer()), client.WithSessionTimeout(crashTimeout))
		ccancel()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		e := election.New(c, path, fmt.Sprintf("cand-%d", i))
		go func() {
			for ctx.Err() == nil {
				term, err := e.Campaign(ctx)
				if err != nil {
					time.Sleep(10 * time.Millisecond) // a crashed candidate's new session
					continue
				}
				leaders <- lead{term, p}
				select {
				case <-term.Done():
				case <-ctx.Done():
				}
			}
		}()
	}
	lats := make([]time.Duration, 0, b.N)
	overlaps := 0
	cur := <-leaders
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if silent {
			cur.proxy.Blackhole()
		} else {
			ectx, ecancel := context.WithTimeout(ctx, 20*time.Second)
			err := zktest.ExpireSession(ectx, srv[0], cur.term.Session().ID(), cur.term.Session().Password())
			ecancel()
			if err != nil {
				b.Fatal(err)
			}
		}
		var next lead
		select {
		case next = <-leaders:
		case <-time.After(3 * crashTimeout):
			b.Fatal("no leader followed the crashed one")
		}
		lats = append(lats, time.Since(t0))
		if next.term.Token() <= cur.term.Token() {
			b.Fatalf("token %d after %d", next.term.Token(), cur.term.Token())
		}
		if cur.term.Err() == nil {
			// The crashed leader's client has not seen the expiry yet
			// (only possible when it was expired, not cut off: a cut-off
			// client ends its term at 2/3 of the timeout, the server its
			// session after the timeout).
			if silent {
				b.Fatal("a new leader while the cut-off leader's term lasts")
			}
			overlaps++
		}
		cur.proxy.Heal() // the crashed candidate comes back and campaigns again
		cur = next
	}
	b.StopTimer()
	sortDurations(lats)
	b.ReportMetric(percentile(lats, 0.50), "p50-ms")
	b.ReportMetric(percentile(lats, 0.99), "p99-ms")
	b.ReportMetric(float64(overlaps), "unaware-crashed")
	if silent {
		b.ReportMetric(percentile(lats, 0.50)/float64(crashTimeout.Milliseconds()), "x-timeout")
	}
}
