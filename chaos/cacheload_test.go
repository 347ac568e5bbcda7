package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
)

// cacheLoad keeps a tree cache following a directory that a writer changes
// (creates, sets and deletes over two levels) while the faults run. The
// cache must converge: once the load stops, the snapshot WaitFor gives for
// the writer's last zxid equals a fresh read of the tree. Its events never
// go back in zxid order for a node, and none is delivered twice.
type cacheLoad struct {
	dir            string
	writer, reader *worker
	admin          *client.Client
	prog           *Progress
	cache          *cache.Cache

	writes, events, resets atomic.Int64
	mu                     sync.Mutex
	problems               []string
}

func newCacheLoad(t *testing.T, e *env, admin *client.Client, prog *Progress, timeout time.Duration) *cacheLoad {
	t.Helper()
	ws := e.workers(t, 2, timeout)
	l := &cacheLoad{dir: loadPath(t, admin, "cache", prog), writer: ws[0], reader: ws[1], admin: admin, prog: prog}
	var err error
	if l.cache, err = cache.OpenTree(testContext(t, 30*time.Second), l.reader.c, l.dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.cache.Close)
	return l
}

func (l *cacheLoad) Name() string { return "cache" }

func (l *cacheLoad) Workers() []*worker { return []*worker{l.writer, l.reader} }

func (l *cacheLoad) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { l.write(ctx) })
	wg.Go(func() { l.follow(ctx) })
	wg.Wait()
}

// write changes one of 4 + 16 nodes at a time: creates it (its parent
// first) when missing, else sets or deletes it.
func (l *cacheLoad) write(ctx context.Context) {
	c := l.writer.c
	var b client.Backoff
	for ctx.Err() == nil {
		p := fmt.Sprintf("%s/%c", l.dir, 'a'+rand.IntN(4))
		if rand.IntN(2) == 0 {
			p += fmt.Sprintf("/%c", 'a'+rand.IntN(4))
		}
		data := []byte(strconv.FormatInt(l.writes.Load(), 10))
		_, err := c.Set(ctx, p, data, -1)
		switch {
		case errors.Is(err, client.ErrNoNode):
			err = c.EnsurePath(ctx, p)
		case err == nil && rand.IntN(3) == 0:
			err = c.Delete(ctx, p, -1)
			if errors.Is(err, client.ErrNotEmpty) {
				err = nil
			}
		}
		if err != nil {
			b.Wait(ctx)
			continue
		}
		b.Reset()
		l.writes.Add(1)
		l.prog.Done("cache")
	}
}

// follow reads the cache's events and checks their order per node.
func (l *cacheLoad) follow(ctx context.Context) {
	seen := map[string]int64{} // path -> the Mzxid of its last Created or Changed
	events := l.cache.Events()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				l.problem("the cache stopped: %v", l.cache.Err())
				return
			}
			l.events.Add(1)
			switch ev.Type {
			case cache.Created, cache.Changed:
				if m, ok := seen[ev.Path]; ok && ev.Stat.Mzxid <= m {
					l.problem("%s %s at mzxid %d after one at %d", ev.Type, ev.Path, ev.Stat.Mzxid, m)
				}
				seen[ev.Path] = ev.Stat.Mzxid
			case cache.Deleted:
				delete(seen, ev.Path)
			case cache.Reset:
				l.resets.Add(1)
			}
		}
	}
}

func (l *cacheLoad) problem(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

func (l *cacheLoad) Check(t *testing.T) (ops, violations int, held string) {
	t.Helper()
	ctx := testContext(t, time.Minute)
	want := map[string]string{}
	var read func(p string)
	read = func(p string) {
		data, _, err := l.admin.Get(ctx, p)
		if err != nil {
			t.Fatalf("cache: reading the tree back: %v", err)
		}
		want[p] = string(data)
		kids, _, err := l.admin.Children(ctx, p)
		if err != nil {
			t.Fatalf("cache: reading the tree back: %v", err)
		}
		for _, k := range kids {
			read(p + "/" + k)
		}
	}
	if err := l.admin.Sync(ctx, l.dir); err != nil {
		t.Fatal(err)
	}
	read(l.dir)
	snap, err := l.cache.WaitFor(ctx, l.writer.c.LastZxid())
	if err != nil {
		l.problem("WaitFor the writer's last zxid: %v", err)
	} else {
		got := 0
		for _, p := range snap.Paths() {
			n, _ := snap.Get(p)
			if w, ok := want[p]; !ok || !bytes.Equal(n.Data, []byte(w)) {
				l.problem("the cache holds %s=%q, the tree %q (present: %v)", p, n.Data, w, ok)
			}
			got++
		}
		if got != len(want) {
			l.problem("the cache holds %d nodes, the tree %d", got, len(want))
		}
	}
	for _, p := range l.problems {
		t.Errorf("cache: %s", p)
	}
	held = fmt.Sprintf("cache: %d writes followed, %d events, %d resets; ended on the tree's %d nodes",
		l.writes.Load(), l.events.Load(), l.resets.Load(), len(want))
	return int(l.writes.Load()), len(l.problems), held
}
