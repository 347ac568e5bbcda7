package configwatch_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// generation is a configuration whose keys a publisher always sets to the
// same number: a snapshot with two different numbers is a mixed one.
type generation map[string]int

const keysPerGeneration = 3

func gen(g int) configwatch.Values {
	v := configwatch.Values{}
	for k := range keysPerGeneration {
		v[fmt.Sprintf("k%d", k)] = fmt.Appendf(nil, "%d", g)
	}
	return v
}

// uniform returns the generation of a snapshot, or an error if it mixes two.
func uniform(s generation) (int, error) {
	if len(s) != keysPerGeneration {
		return 0, fmt.Errorf("snapshot with %d keys, want %d: %v", len(s), keysPerGeneration, s)
	}
	g := -1
	for _, v := range s {
		if g >= 0 && v != g {
			return 0, fmt.Errorf("mixed generations: %v", s)
		}
		g = v
	}
	return g, nil
}

// A reader racing 300 publishes never observes a mixed generation, with
// the ready flag or atomic publishes, through Watch or through Get; the
// watch ends on the last one.
func TestNoMixedGenerations(t *testing.T) {
	for _, mode := range []string{"flag", "atomic"} {
		t.Run(mode, func(t *testing.T) {
			zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
				const publishes = 300
				ctx := recipetest.Context(t)
				pub, watcher, getter := b.Connect(t), b.Connect(t), b.Connect(t)
				path := zktest.UniquePath(t) + "/config"
				var opts []configwatch.Option
				if mode == "atomic" {
					opts = append(opts, configwatch.WithAtomic())
				}
				publisher := configwatch.New(pub, path, configwatch.Raw, opts...)
				if _, err := publisher.Publish(ctx, gen(0)); err != nil {
					t.Fatal(err)
				}
				wctx, stopWatch := context.WithCancel(ctx)
				defer stopWatch()
				feed := configwatch.New(watcher, path, configwatch.JSON[generation]).Watch(wctx)

				var wg sync.WaitGroup
				var last int64
				wg.Add(1)
				go func() { // the publisher
					defer wg.Done()
					for g := 1; g <= publishes; g++ {
						zxid, err := publisher.Set(ctx, gen(g))
						if err != nil {
							t.Error(err)
							return
						}
						last = zxid
					}
				}()
				gets := 0
				getsDone := make(chan struct{})
				go func() { // a reader that polls with Get
					defer close(getsDone)
					reader := configwatch.New(getter, path, configwatch.JSON[generation])
					for g := 0; g < publishes; {
						s, err := reader.Get(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						if g, err = uniform(s.Value); err != nil {
							t.Error("Get:", err)
							return
						}
						gets++
					}
				}()
				// A naive reader (no ready check) shows that the race is real.
				naiveReads, naiveMixed := 0, 0
				naiveDone := make(chan struct{})
				go func() {
					defer close(naiveDone)
					if mode != "flag" {
						return
					}
					naive := b.Connect(t)
					for g := 0; g < publishes && ctx.Err() == nil; naiveReads++ {
						s := generation{}
						for k := range keysPerGeneration {
							data, _, err := naive.Get(ctx, fmt.Sprintf("%s/k%d", path, k))
							if err != nil {
								t.Error(err)
								return
							}
							fmt.Sscan(string(data), &g)
							s[fmt.Sprintf("k%d", k)] = g
						}
						if _, err := uniform(s); err != nil {
							naiveMixed++
						}
					}
				}()
				var prev int64
				seen := 0
				for s := range feed.Values() {
					if s.Err != nil {
						t.Fatalf("snapshot did not decode: %v", s.Err)
					}
					g, err := uniform(s.Value)
					if err != nil {
						t.Fatal("Watch:", err)
					}
					if s.Zxid <= prev {
						t.Fatalf("snapshot zxid %d after %d", s.Zxid, prev)
					}
					prev = s.Zxid
					seen++
					if g == publishes {
						break
					}
				}
				wg.Wait()
				<-getsDone
				<-naiveDone
				if prev != last {
					t.Fatalf("last snapshot has zxid %d, the last publish %d", prev, last)
				}
				t.Logf("%s: %d snapshots watched, %d read with Get, of %d publishes; a naive reader saw %d mixed snapshots in %d reads",
					mode, seen, gets, publishes, naiveMixed, naiveReads)
				if mode == "flag" && naiveReads >= 100 && naiveMixed == 0 {
					t.Fatal("the naive reader never saw a publish in progress: the test does not race")
				}
			})
		})
	}
}

// After a partition, and across a session expiry, the watch ends on the
// configuration published meanwhile, and does not send a snapshot twice.
func TestWatchLevelTriggered(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		pub := b.Connect(t)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, opts...)
		path := zktest.UniquePath(t) + "/config"
		publisher := configwatch.New(pub, path, configwatch.Raw)
		if _, err := publisher.Publish(ctx, gen(1)); err != nil {
			t.Fatal(err)
		}
		feed := configwatch.New(c, path, configwatch.JSON[generation]).Watch(ctx)
		until(t, feed, 1)
		cut()
		for g := 2; g <= 5; g++ {
			if _, err := publisher.Set(ctx, gen(g)); err != nil {
				t.Fatal(err)
			}
		}
		heal()
		until(t, feed, 5)
		none(t, feed, "after the partition healed")

		sess := c.Session()
		b.ExpireSession(t, sess)
		recipetest.Within(t, sess.Done(), "the watcher's session loss")
		zxid, err := configwatch.New(pub, path, configwatch.Raw, configwatch.WithAtomic()).Set(ctx, gen(6))
		if err != nil {
			t.Fatal(err)
		}
		if s := until(t, feed, 6); s.Zxid != zxid {
			t.Fatalf("snapshot zxid %d, publish zxid %d", s.Zxid, zxid)
		}
		none(t, feed, "after the new session")
	})
}

// until receives snapshots until one of generation g.
func until(t *testing.T, feed *recipes.Feed[configwatch.Snapshot[generation]], g int) configwatch.Snapshot[generation] {
	t.Helper()
	deadline := time.After(zktest.Scale(30 * time.Second))
	for {
		select {
		case s, ok := <-feed.Values():
			if !ok {
				t.Fatalf("feed ended: %v", feed.Err())
			}
			got, err := uniform(s.Value)
			if err != nil {
				t.Fatal(err)
			}
			if got == g {
				return s
			}
		case <-deadline:
			t.Fatalf("no snapshot of generation %d", g)
		}
	}
}

func none(t *testing.T, feed *recipes.Feed[configwatch.Snapshot[generation]], when string) {
	t.Helper()
	select {
	case s := <-feed.Values():
		t.Fatalf("a snapshot %s: %v", when, s.Value)
	case <-time.After(zktest.Scale(300 * time.Millisecond)):
	}
}

// Get waits while a publish is in progress, and says when there is no
// configuration at all.
func TestGet(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := zktest.UniquePath(t) + "/config"
		if _, err := configwatch.New(c, path, configwatch.JSON[generation]).Get(ctx); !errors.Is(err, configwatch.ErrNoConfig) {
			t.Fatalf("Get of a missing configuration: %v, want ErrNoConfig", err)
		}
		// A publish in progress: keys written, ready not yet created.
		if err := c.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		for k, v := range gen(7) {
			if _, err := c.Create(ctx, path+"/"+k, v, client.Persistent); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan configwatch.Snapshot[generation], 1)
		go func() {
			s, err := configwatch.New(b.Connect(t), path, configwatch.JSON[generation]).Get(ctx)
			if err != nil {
				t.Error(err)
			}
			done <- s
		}()
		select {
		case s := <-done:
			t.Fatalf("Get returned during a publish: %v", s.Value)
		case <-time.After(zktest.Scale(200 * time.Millisecond)):
		}
		if _, err := c.Create(ctx, path+"/ready", nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-done:
			if g, err := uniform(s.Value); err != nil || g != 7 {
				t.Fatalf("Get returned %v (%v)", s.Value, err)
			}
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("Get did not return once ready was created")
		}
	})
}

// A watcher that has not yet received the configuration it read gets it
// even when a publish starts meanwhile and does not complete (its
// publisher stalled or died after deleting ready): the last complete
// configuration is the current one until a publish completes, and it
// must not be held back behind that publish.
func TestWatchDeliversDuringStalledPublish(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		pub, c := b.Connect(t), b.Connect(t)
		path := zktest.UniquePath(t) + "/config"
		if _, err := configwatch.New(pub, path, configwatch.Raw).Publish(ctx, gen(1)); err != nil {
			t.Fatal(err)
		}
		decoded := make(chan struct{}, 1)
		decode := func(v configwatch.Values) (generation, error) {
			select {
			case decoded <- struct{}{}:
			default:
			}
			return configwatch.JSON[generation](v)
		}
		feed := configwatch.New(c, path, decode).Watch(ctx)
		// The watcher has read generation 1 (and watches ready); nobody
		// has received anything yet. A publish begins, and stalls.
		select {
		case <-decoded:
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("the watcher never read the configuration")
		}
		if err := pub.Delete(ctx, path+"/ready", -1); err != nil {
			t.Fatal(err)
		}
		if _, err := pub.Set(ctx, path+"/k0", []byte("2"), -1); err != nil {
			t.Fatal(err)
		}
		// The watcher saw the deletion (the server dropped its watch then)
		// and watches ready again, waiting for its creation.
		recipetest.WaitWatched(t, b, c.Session(), path+"/ready")
		select {
		case s := <-feed.Values():
			if g, err := uniform(s.Value); err != nil || g != 1 {
				t.Fatalf("during the stalled publish: %v (%v), want generation 1", s.Value, err)
			}
		case <-time.After(zktest.Scale(5 * time.Second)):
			t.Fatal("the snapshot read before the publish began was never delivered")
		}
		// The publish completes: its snapshot follows.
		if _, err := configwatch.New(pub, path, configwatch.Raw).Set(ctx, gen(2)); err != nil {
			t.Fatal(err)
		}
		until(t, feed, 2)
	})
}

// A watcher reads no more during a publish than the publish's own keys:
// when ready goes, it only watches for its return (its last snapshot is
// still the configuration). It does not look at every key to make sure
// the path is still a configuration's, which would cost every watcher a
// request per key at every publish.
func TestWatchDuringPublishChecksNoKey(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		reader := sdkmetric.NewManualReader()
		pub := b.Connect(t)
		c := b.Connect(t, client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
		path := zktest.UniquePath(t) + "/config"
		const keys = 16
		values := configwatch.Values{}
		for k := range keys {
			values[fmt.Sprintf("k%d", k)] = []byte("1")
		}
		publisher := configwatch.New(pub, path, configwatch.Raw)
		if _, err := publisher.Publish(ctx, values); err != nil {
			t.Fatal(err)
		}
		feed := configwatch.New(c, path, configwatch.Raw).Watch(ctx)
		var first configwatch.Snapshot[configwatch.Values]
		select {
		case first = <-feed.Values():
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatalf("no first snapshot (%v)", feed.Err())
		}
		before := recipetest.Requests(t, reader)
		// A publish begins: ready goes, and the watcher waits for it.
		if err := pub.Delete(ctx, path+"/ready", -1); err != nil {
			t.Fatal(err)
		}
		recipetest.WaitWatched(t, b, c.Session(), path+"/ready")
		values["k0"] = []byte("2")
		if _, err := publisher.Set(ctx, values); err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-feed.Values():
			if s.Zxid == first.Zxid || string(s.Value["k0"]) != "2" {
				t.Fatalf("after the publish: %v at zxid %d, want k0=2 past zxid %d", s.Value, s.Zxid, first.Zxid)
			}
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("no snapshot of the publish")
		}
		after := recipetest.Requests(t, reader)
		if n := after["exists ok"] - before["exists ok"]; n >= keys {
			t.Fatalf("the watcher sent %d exists requests during a publish of %d keys (requests before %v, after %v)", n, keys, before, after)
		}
	})
}

// A publish looks only at the keys it writes, and at ready, once the path
// is a configuration: setting one key of many costs a few requests, not
// one per stored key; with or without WithAtomic.
func TestPublishChecksOnlyWhatItTouches(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		reader := sdkmetric.NewManualReader()
		c := b.Connect(t, client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
		const keys = 32
		for _, opts := range [][]configwatch.Option{nil, {configwatch.WithAtomic()}} {
			path := zktest.UniquePath(t) + "/config"
			k := configwatch.New(c, path, configwatch.Raw, opts...)
			values := configwatch.Values{}
			for i := range keys {
				values[fmt.Sprintf("k%d", i)] = []byte("1")
			}
			if _, err := k.Publish(ctx, values); err != nil {
				t.Fatal(err)
			}
			before := recipetest.Requests(t, reader)
			if _, err := k.Set(ctx, configwatch.Values{"k0": []byte("2")}); err != nil {
				t.Fatal(err)
			}
			after := recipetest.Requests(t, reader)
			if n := after["exists ok"] - before["exists ok"]; n > 3 {
				t.Fatalf("%d options: setting one key of %d sent %d exists requests (before %v, after %v)", len(opts), keys, n, before, after)
			}
			got, err := k.Get(ctx)
			if err != nil || string(got.Value["k0"]) != "2" || len(got.Value) != keys {
				t.Fatalf("after the set: %v (%v)", got.Value, err)
			}
		}
	})
}
