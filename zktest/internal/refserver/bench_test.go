package refserver_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkit-dev/zkit/zktest"
	"github.com/zkit-dev/zkit/zktest/internal/refserver"
)

// BenchmarkCreateDelete measures create+delete pairs from N concurrent
// sessions (go-zookeeper clients), against the reference server and, in
// the same run, against real ZooKeeper (zktest's standalone server:
// forceSync=no). ops/s counts both operations of a pair.
//
//	go test ./zktest/internal/refserver -run '^$' -bench CreateDelete -benchtime 5s
func BenchmarkCreateDelete(b *testing.B) {
	ref, err := refserver.Start("127.0.0.1:0", refserver.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ref.Close() })
	targets := []struct {
		name string
		addr func(b *testing.B) string
	}{
		{"refserver", func(*testing.B) string { return ref.Addr() }},
		{"zookeeper", func(b *testing.B) string { return sharedZK(b) }},
	}
	for _, tg := range targets {
		for _, n := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("server=%s/sessions=%d", tg.name, n), func(b *testing.B) {
				benchCreateDelete(b, tg.addr(b), n)
			})
		}
	}
}

var (
	zkOnce sync.Once
	zkAddr string
)

// sharedZK starts one real ZooKeeper for the benchmark run (skipped when
// none is installed).
func sharedZK(b *testing.B) string {
	zkOnce.Do(func() {
		if z := zktest.SharedZooKeeper(b); z != nil {
			zkAddr = z.Servers()[0]
		}
	})
	if zkAddr == "" {
		b.Skip("no ZooKeeper")
	}
	return zkAddr
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func benchCreateDelete(b *testing.B, addr string, sessions int) {
	conns := make([]*zk.Conn, sessions)
	for i := range conns {
		c, ev, err := zk.Connect([]string{addr}, 30*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for c.State() != zk.StateHasSession {
			select {
			case <-ev:
			case <-time.After(10 * time.Second):
				b.Fatal("no session")
			}
		}
		conns[i] = c
	}
	base := fmt.Sprintf("/bench-%d-%d", sessions, time.Now().UnixNano())
	if _, err := conns[0].Create(base, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	b.ResetTimer()
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				p := fmt.Sprintf("%s/n%d", base, i)
				if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
					errs <- err
					return
				}
				if err := c.Delete(p, -1); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(2*b.N)/elapsed.Seconds(), "ops/s")
}
