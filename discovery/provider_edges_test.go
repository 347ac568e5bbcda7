package discovery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A provider of a service without a node: ErrNoInstance at once; the
// instances registered later are picked; all going away and coming back.
func TestProviderEdgeEmptyGoneBack(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		reader := discovery.New(b.Connect(t), base)
		for _, s := range []discovery.Strategy{discovery.RoundRobin(), discovery.Random(), discovery.Sticky(discovery.RoundRobin())} {
			p := reader.Provider(ctx, "api", discovery.WithStrategy(s))
			if _, err := p.Pick(ctx); !errors.Is(err, discovery.ErrNoInstance) {
				t.Fatalf("Pick with no service = %v", err)
			}
		}
		p := reader.Provider(ctx, "api")
		sticky := reader.Provider(ctx, "api", discovery.WithStrategy(discovery.Sticky(discovery.RoundRobin())))
		d := discovery.New(b.Connect(t), base)
		for round := range 3 {
			var regs []*discovery.Registration
			for n, id := range []string{"a", "b", "c"} {
				r, err := d.Register(ctx, instance(id, n+1))
				if err != nil {
					t.Fatal(err)
				}
				regs = append(regs, r)
			}
			eventuallyUsable(t, p, "a,b,c")
			eventuallyUsable(t, sticky, "a,b,c")
			seen := map[string]bool{}
			for range 3 {
				inst, err := p.Pick(ctx)
				if err != nil {
					t.Fatal(err)
				}
				seen[inst.ID] = true
			}
			if len(seen) != 3 {
				t.Fatalf("round %d: round robin picked %v", round, seen)
			}
			first, err := sticky.Pick(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range regs {
				if err := r.Unregister(ctx); err != nil {
					t.Fatal(err)
				}
			}
			eventuallyPicks(t, p, "")
			eventuallyPicks(t, sticky, "")
			_ = first
		}
	})
}

// Closing the client while Pick waits for the first view (the connection
// does not answer) ends it promptly with ErrClosed, and Watch too.
func TestProviderEdgeCloseWhileBlocked(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		defer heal()
		c := b.Connect(t, opts...)
		cut()
		d := discovery.New(c, base)
		bg := context.WithoutCancel(ctx)
		p := d.Provider(bg, "api")
		feed := d.Watch(bg, "api")
		picked := make(chan error, 1)
		go func() {
			_, err := p.Pick(ctx)
			picked <- err
		}()
		select {
		case err := <-picked:
			t.Fatalf("Pick returned %v before Close on a cut connection", err)
		case <-time.After(200 * time.Millisecond):
		}
		c.Close()
		select {
		case err := <-picked:
			if !errors.Is(err, client.ErrClosed) {
				t.Fatalf("Pick = %v, want ErrClosed", err)
			}
		case <-time.After(zktest.Scale(5 * time.Second)):
			t.Fatal("Pick still blocked after Close")
		}
		recipetest.Within(t, p.Done(), "the provider's end")
		if !errors.Is(p.Err(), client.ErrClosed) {
			t.Fatalf("provider Err = %v", p.Err())
		}
		recipetest.FeedEnds(t, feed, client.ErrClosed, "Watch after Close")
	})
}

// Instance JSON as Curator writes it, with unknown members and without
// the optional ones, is read by Instances, Watch and a Provider.
func TestProviderEdgeCuratorJSON(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		if err := admin.EnsurePath(ctx, base+"/api"); err != nil {
			t.Fatal(err)
		}
		docs := map[string]string{
			"a": `{"name":"api","id":"a","address":"10.0.0.1","port":8001,"sslPort":null,"payload":null,"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":null,"future":{"x":[1,2]},"weight":7}`,
			"b": `{"name":"api","id":"b","address":"10.0.0.2","port":8002}`,
			"c": `{"name":"api","id":"c","address":"10.0.0.3","port":8003,"enabled":true,"uriSpec":{"parts":[{"value":"http://","variable":false},{"value":"address"}]}}`,
			"d": `{"name":"api","id":"d","address":"10.0.0.4","port":8004,"payload":{"@class":"x.Y","k":"v"},"serviceType":"STATIC"}`,
		}
		for id, doc := range docs {
			if _, err := admin.Create(ctx, base+"/api/"+id, []byte(doc), client.Persistent); err != nil {
				t.Fatal(err)
			}
		}
		d := discovery.New(b.Connect(t), base)
		eventuallyInstances(t, d, "api", "a@10.0.0.1:8001,b@10.0.0.2:8002,c@10.0.0.3:8003,d@10.0.0.4:8004")
		awaitSnapshot(t, d.Watch(ctx, "api"), "a@10.0.0.1:8001,b@10.0.0.2:8002,c@10.0.0.3:8003,d@10.0.0.4:8004")
		eventuallyUsable(t, d.Provider(ctx, "api"), "a,b,c,d")
	})
}
