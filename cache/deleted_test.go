package cache_test

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A delete's event carries the delete's zxid where the server says it
// (ZooKeeper 3.9, the reference server with ServerWatchEventZxids), and
// none where it does not (ZooKeeper 3.8, the reference server by
// default): never a later transaction's, also for a node created again
// before the receiver read the delete; in both watch modes.
func TestDeletedZxid(t *testing.T) {
	eachZxidMode(t, func(t *testing.T, b recipetest.EventZxidBackend, opts ...cache.Option) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w)
		mustCreate(t, w, r+"/a", r+"/b")
		cc, err := cache.OpenTree(ctx, b.Connect(t), r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		next := func() cache.Event {
			t.Helper()
			select {
			case ev := <-cc.Events():
				return ev
			case <-time.After(zktest.Scale(20 * time.Second)):
				t.Fatal("no event")
			}
			return cache.Event{}
		}
		for next().Type != cache.Initialized {
		}
		del := func(p string) int64 {
			if err := w.Delete(ctx, p, -1); err != nil {
				t.Fatal(err)
			}
			return w.LastZxid() // the delete's
		}
		za, zb := del(r+"/a"), del(r+"/b")
		zc := mustCreate(t, w, r+"/b") // b again, before the events are read
		waitFor(t, cc, zc)

		type seen struct {
			typ  cache.EventType
			path string
			zxid int64
		}
		var got []seen
		for range 3 {
			ev := next()
			got = append(got, seen{ev.Type, ev.Path, ev.Zxid})
		}
		want := []seen{{cache.Deleted, r + "/a", za}, {cache.Deleted, r + "/b", zb}, {cache.Created, r + "/b", zc}}
		if !b.SendsZxid {
			// A delete without a zxid is placed as late as it can
			// have been: compare the events as a set.
			want[0].zxid, want[1].zxid = 0, 0
			order := func(x, y seen) int { return cmp.Or(strings.Compare(x.path, y.path), cmp.Compare(x.typ, y.typ)) }
			slices.SortFunc(got, order)
			slices.SortFunc(want, order)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("events %+v, want %+v", got, want)
		}
	})
}

// Under churn (nodes deleted and created again at once, many times, while
// the cache reads them and the receiver reads its events), each delete
// the receiver is told of carries the zxid of the delete of the very node
// it was told of, or none where the server does not say: never that of
// another node's delete at the same path.
func TestDeletedZxidUnderChurn(t *testing.T) {
	eachZxidMode(t, func(t *testing.T, b recipetest.EventZxidBackend, opts ...cache.Option) {
		ctx := recipetest.Context(t)
		w := b.Connect(t)
		r := dir(t, w)
		cc, err := cache.OpenTree(ctx, b.Connect(t), r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		received := make(chan []cache.Event, 1)
		go func() {
			var evs []cache.Event
			for ev := range cc.Events() {
				if evs = append(evs, ev); ev.Path == r+"/end" {
					break
				}
			}
			received <- evs
		}()
		deletedAt := map[int64]int64{} // a node's czxid: its delete's zxid
		paths := []string{r + "/a", r + "/b", r + "/c"}
		for i := range 150 {
			p := paths[i%len(paths)]
			czxid := mustCreate(t, w, p)
			if err := w.Delete(ctx, p, -1); err != nil {
				t.Fatal(err)
			}
			deletedAt[czxid] = w.LastZxid()
		}
		mustCreate(t, w, r+"/end")
		var evs []cache.Event
		select {
		case evs = <-received:
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("no event of /end")
		}
		told := map[string]int64{} // path: the czxid of the node the receiver knows
		deletes, known := 0, 0
		for _, ev := range evs {
			switch ev.Type {
			case cache.Created:
				told[ev.Path] = ev.Stat.Czxid
			case cache.Deleted:
				czxid, ok := told[ev.Path]
				if !ok {
					t.Fatalf("deleted %s, which the receiver was not told of", ev.Path)
				}
				delete(told, ev.Path)
				deletes++
				switch {
				case ev.Zxid == 0:
				case !b.SendsZxid:
					t.Fatalf("deleted %s at %#x: the server said no zxid", ev.Path, ev.Zxid)
				case ev.Zxid != deletedAt[czxid]:
					t.Fatalf("deleted %s (created at %#x) at %#x, want %#x", ev.Path, czxid, ev.Zxid, deletedAt[czxid])
				default:
					known++
				}
			}
		}
		t.Logf("%d deletes made, %d told, %d of them with their zxid", len(deletedAt), deletes, known)
		if b.SendsZxid && known < deletes {
			t.Errorf("%d of %d deletes told without their zxid, which the server said", deletes-known, deletes)
		}
	})
}

// eachZxidMode runs fn in both watch modes on the servers that send a
// watch event's zxid and those that do not.
func eachZxidMode(t *testing.T, fn func(t *testing.T, b recipetest.EventZxidBackend, opts ...cache.Option)) {
	backends := recipetest.EventZxidBackends(t)
	for _, mode := range []struct {
		name string
		opts []cache.Option
	}{{"persistent", nil}, {"oneshot", []cache.Option{cache.WithOneShotWatches()}}} {
		for _, b := range backends {
			t.Run(mode.name+"/"+b.Name, func(t *testing.T) { fn(t, b, mode.opts...) })
		}
	}
}
