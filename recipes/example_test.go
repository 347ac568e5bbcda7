package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// A recipe of your own on recipes.Follow: a level-triggered view of one
// node's data, read again after every event, reconnect and new session.
func ExampleFollow() {
	srv, err := zktest.StartServer("127.0.0.1:0") // the bundled reference server
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	read := func(ctx context.Context) (string, <-chan client.WatchEvent, error) {
		data, _, w, err := c.GetW(ctx, "/app/mode")
		if errors.Is(err, client.ErrNoNode) {
			var ok bool
			ok, _, w, err = c.ExistsW(ctx, "/app/mode")
			if err == nil && ok {
				w = recipes.Fired() // created meanwhile: read it
			}
			return "(unset)", w, err
		}
		return string(data), w, err
	}
	feed := recipes.Follow(ctx, c, read, func(a, b string) bool { return a == b })
	fmt.Println(<-feed.Values())

	if err := c.EnsurePath(ctx, "/app"); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.Create(ctx, "/app/mode", []byte("maintenance"), client.Persistent); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(<-feed.Values())
	// Output:
	// (unset)
	// maintenance
}

// A queue of your own kind of node, in the herd-free walk every zkit lock
// uses: each waiter watches only the node just below its own.
func ExampleQueue() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	turn := recipes.Kind{Marker: "turn-", Exclusive: true, Recipe: "turns"}
	q := recipes.NewQueue(c, "/app/turns", nil, turn)
	lease, err := q.Acquire(ctx, recipes.AcquireOptions{Kind: turn})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("my turn, token > 0:", lease.Token() > 0)
	fmt.Println(lease.Unlock(ctx))
	// Output:
	// my turn, token > 0: true
	// <nil>
}

// A recipe whose turn in the queue is followed by a wait of its own (a
// counting semaphore's holder of the queue waits for a free lease): a
// session lost during either wait costs the participant only its place in
// line. Wait queues again by itself; the recipe's own wait hands its error
// to Rejoin, which queues again too, or says how the attempt ends.
func ExampleTicket_Rejoin() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// The recipe's own wait, once its turn has come: until /app/open
	// exists.
	open := func(ctx context.Context) error {
		for {
			ok, _, w, err := c.ExistsW(ctx, "/app/open")
			if err != nil || ok {
				return err // a session lost here is Rejoin's to judge
			}
			<-w
		}
	}
	if err := c.EnsurePath(ctx, "/app/open"); err != nil {
		fmt.Println(err)
		return
	}

	gate := recipes.Kind{Marker: "gate-", Exclusive: true, Recipe: "gate"}
	t, err := recipes.NewQueue(c, "/app/gate", nil, gate).Join(ctx, gate, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		err := t.Wait(ctx)
		if err == nil {
			err = open(ctx)
		}
		if err == nil {
			break
		}
		if err := t.Rejoin(ctx, err); err != nil {
			t.Abandon(ctx)
			fmt.Println(err)
			return
		}
	}
	lease := t.Hold(recipes.LeaseOptions{})
	fmt.Println("through the gate, under the session that holds:", lease.Session() == c.Session())
	fmt.Println(lease.Unlock(ctx))
	// Output:
	// through the gate, under the session that holds: true
	// <nil>
}

// A request of a recipe of your own, sent again while the session it
// belongs to lives. Once that session is lost, Pause says so instead of
// waiting: the request was for the session's node, or its place in line.
func ExamplePause() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	sess, err := c.WaitConnected(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}

	join := func() error {
		var b client.Backoff
		for {
			_, err := c.Create(ctx, "/app-member", nil, client.Ephemeral)
			if !client.IsRetryable(err) {
				return err
			}
			if err := recipes.Pause(ctx, c, sess, &b); err != nil {
				return err
			}
		}
	}
	fmt.Println(join())

	c.Close() // ends sess
	err = recipes.Pause(ctx, c, sess, &client.Backoff{})
	fmt.Println(errors.Is(err, recipes.ErrLost), errors.Is(err, client.ErrClosed))
	// Output:
	// <nil>
	// true true
}

// The error of a wait of your own whose session was lost: it matches
// ErrLost and how the session ended, here its expiry on the server.
func ExampleLostSession() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	sess, err := c.WaitConnected(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}

	// A wait under sess for w, a watch set under sess, to fire.
	wait := func(w <-chan client.WatchEvent) error {
		select {
		case ev := <-w:
			if ev.Type == client.EventNotWatching { // the watch went with its session
				return recipes.LostSession(c, ev.Err)
			}
			return nil
		case <-sess.Done():
			return recipes.LostSession(c, sess.Err())
		}
	}
	_, _, w, err := c.ExistsW(ctx, "/app/go")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.ExpireSession(sess.ID())
	err = wait(w)
	fmt.Println(errors.Is(err, recipes.ErrLost), errors.Is(err, client.ErrSessionExpired))
	// Output:
	// true true
}

// A node of your own kept present across sessions: when its session is
// lost, the node is made again under the client's next one, as a new
// Presence with a higher token.
func ExampleKeep() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	k, err := recipes.Keep(ctx, c, "/app/workers/w1", []byte("up"), recipes.KeepOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	first := k.Presence()
	srv.ExpireSession(first.Session().ID())
	<-first.Done()
	fmt.Println("first presence lost:", errors.Is(first.Err(), recipes.ErrLost))

	next, err := k.Present(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("present again, higher token:", next.Token() > first.Token())
	fmt.Println(k.Remove(ctx))
	// Output:
	// first presence lost: true
	// present again, higher token: true
	// <nil>
}

// A write fenced by a lease: Guard makes the Multi apply only while the
// lease's node exists, so a holder that lost its turn (its session
// expired while it was paused) cannot overwrite the next holder's work.
func ExampleLease_Guard() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.EnsurePath(ctx, "/app/report"); err != nil {
		fmt.Println(err)
		return
	}

	turn := recipes.Kind{Marker: "turn-", Exclusive: true, Recipe: "turns"}
	lease, err := recipes.NewQueue(c, "/app/turns", nil, turn).Acquire(ctx, recipes.AcquireOptions{Kind: turn})
	if err != nil {
		fmt.Println(err)
		return
	}
	write := func() error {
		_, err := c.Multi(ctx, lease.Guard(), client.SetOp("/app/report", []byte("done"), -1))
		return err
	}
	fmt.Println("while held:", write())
	if err := lease.Unlock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("once released, refused:", errors.Is(write(), client.ErrNoNode))
	// Output:
	// while held: <nil>
	// once released, refused: true
}

// The options of a recipe of your own, as zkit's recipes have them: an
// Option type of its own, and a configuration that embeds the settings
// every recipe shares next to its own. Apply makes the configuration; the
// Options' methods give what Keep, a Lease and a create take.
func ExampleOptions() {
	type config struct {
		recipes.Options
		data []byte
	}
	type Option func(*config)
	withSuspendTolerance := func(d time.Duration) Option {
		return func(c *config) { c.SuspendTolerance = d }
	}
	withData := func(data []byte) Option {
		return func(c *config) { c.data = data }
	}

	cfg := recipes.Apply([]Option{withSuspendTolerance(2 * time.Second), withData([]byte("w1"))})
	fmt.Println(string(cfg.data), cfg.Lease().SuspendTolerance, cfg.Keep().SuspendTolerance)
	// Output:
	// w1 2s 2s
}

// Several leases handed back in one call: two shared turns of a queue,
// released together.
func ExampleUnlockAll() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	read := recipes.Kind{Marker: "read-", Recipe: "reads"} // shared: readers hold together
	q := recipes.NewQueue(c, "/app/reads", nil, read)
	var held []*recipes.Lease
	for range 2 {
		l, err := q.Acquire(ctx, recipes.AcquireOptions{Kind: read})
		if err != nil {
			fmt.Println(err)
			return
		}
		held = append(held, l)
	}
	fmt.Println("released:", recipes.UnlockAll(ctx, held...))
	fmt.Println("first ended with:", held[0].Err())
	// Output:
	// released: <nil>
	// first ended with: zkit: released
}

// A leader publishing a new value in its node without giving up its place:
// Update writes the node of a lease whose waiters confirm their turn on
// the server (an election's, as election's Term.Proclaim does), and the
// lease takes the write for its own.
func ExampleLease_Update() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	latch := recipes.LatchKind // Confirmed: its waiters check their turn
	q := recipes.NewQueue(c, "/app/leader", nil, latch)
	lease, err := q.Acquire(ctx, recipes.AcquireOptions{Kind: latch, Data: []byte("10.0.0.1:80")})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := lease.Update(ctx, []byte("10.0.0.1:8080")); err != nil {
		fmt.Println(err)
		return
	}
	data, _, err := c.Get(ctx, lease.Node())
	fmt.Println(string(data), err)
	fmt.Println("still held:", lease.Err() == nil)
	fmt.Println(lease.Unlock(ctx))
	// Output:
	// 10.0.0.1:8080 <nil>
	// still held: true
	// <nil>
}
