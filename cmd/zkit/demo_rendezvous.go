package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/rendezvous"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// rendezvousLaunch: the paper's rendezvous. A launcher creates zr, workers
// start waiting, and only once every worker has read zr empty (its
// client's telemetry counts the read) does the master publish its
// address: every worker gets it. Then the launcher ends: the master and
// every worker watching zr see it vanish.
func rendezvousLaunch(ctx context.Context, d *demoEnv) (string, error) {
	return rendezvousRun(ctx, d, func(ctx context.Context, c *client.Client, path string) ([]byte, error) {
		return rendezvous.New(c, path).Wait(ctx)
	})
}

// rendezvousRun is rendezvousLaunch with the workers' wait (Wait; a
// test's may be broken on purpose).
func rendezvousRun(ctx context.Context, d *demoEnv, wait func(ctx context.Context, c *client.Client, path string) ([]byte, error)) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, 2)
	if err != nil {
		return "", err
	}
	defer closeAll()
	reads := make([]*readCounter, d.workers)
	for i := range reads {
		reads[i] = new(readCounter)
		c, err := d.connect(ctx, client.WithMeterProvider(reads[i]))
		if err != nil {
			return "", err
		}
		defer c.Close()
		cs = append(cs, c)
	}
	launcher, master, workers := cs[0], cs[1], cs[2:]
	path := d.path("rendezvous/zr")
	if _, err := rendezvous.New(launcher, path).Create(ctx); err != nil {
		return "", err
	}
	d.count(1)
	const addr = "master.example:7000"
	got := make(chan error, len(workers))
	for _, c := range workers {
		go func() {
			data, err := wait(ctx, c, path)
			switch {
			case err != nil:
				got <- err
			case string(data) != addr:
				got <- violationf("a worker got %q, not the master's address", data)
			default:
				d.count(1)
				got <- nil
			}
		}()
	}
	// A worker is waiting once it has read zr (its client's only reads are
	// its wait's), empty: the master has not published yet. One that
	// returned already has failed: the address is not there yet.
	if err := waitFor(ctx, func() bool {
		for _, r := range reads {
			if r.reads.Load() == 0 {
				return len(got) > 0
			}
		}
		return true
	}); err != nil {
		return "", fmt.Errorf("waiting for every worker to read %s: %w", path, err)
	}
	zr := rendezvous.New(master, path)
	if err := zr.Publish(ctx, []byte(addr)); err != nil {
		return "", err
	}
	d.count(1)
	for range workers {
		if err := <-got; err != nil {
			return "", err
		}
	}

	// Everyone watches zr; the launcher ends.
	gone := make(chan error, len(cs)-1)
	for _, c := range cs[1:] {
		feed := rendezvous.New(c, path).Watch(ctx)
		if v := <-feed.Values(); !v.Filled() {
			return "", violationf("zr is not filled after the master published")
		}
		go func() {
			for v := range feed.Values() {
				if !v.Exists {
					d.count(1)
					gone <- nil
					return
				}
			}
			gone <- feed.Err()
		}()
	}
	launcher.Close()
	for range cs[1:] {
		if err := <-gone; err != nil {
			return "", err
		}
	}
	if err := zr.Publish(ctx, []byte(addr)); !errors.Is(err, rendezvous.ErrGone) {
		return "", violationf("publishing after the launcher ended: %v, want ErrGone", err)
	}
	return fmt.Sprintf("%d workers waiting before the master got its address; launcher exit seen by master and all workers",
		len(workers)), nil
}

// readCounter is a client's meter provider (client.WithMeterProvider)
// that counts the client's reads of a node that succeeded: the demo's way
// to know that a worker has read zr, with no hook in the recipe.
type readCounter struct {
	noop.MeterProvider
	reads atomic.Int64
}

func (p *readCounter) Meter(string, ...metric.MeterOption) metric.Meter { return readMeter{p: p} }

type readMeter struct {
	noop.Meter
	p *readCounter
}

// Float64Histogram counts on the client's request durations, which it
// records once each call has its reply (zkit.op, zkit.outcome).
func (m readMeter) Float64Histogram(name string, _ ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	if name != "zkit.client.request.duration" {
		return noop.Float64Histogram{}, nil
	}
	return readHistogram{p: m.p}, nil
}

type readHistogram struct {
	noop.Float64Histogram
	p *readCounter
}

func (h readHistogram) Record(_ context.Context, _ float64, opts ...metric.RecordOption) {
	attrs := metric.NewRecordConfig(opts).Attributes()
	op, _ := attrs.Value("zkit.op")
	outcome, _ := attrs.Value("zkit.outcome")
	if op.AsString() == "get" && outcome.AsString() == "ok" {
		h.p.reads.Add(1)
	}
}
