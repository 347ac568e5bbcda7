package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// An Update made while the instance is registered again (its node deleted
// by someone else, created again by zkit) is not lost: once the instance
// is present, its node holds the last Update, whether that was made
// before, during or after the creation.
func TestUpdateDuringReregistration(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		c := b.Connect(t)
		r, err := discovery.New(c, base).Register(ctx, instance("w", 1))
		if err != nil {
			t.Fatal(err)
		}
		// Readers of the registration's state, as a busy program has.
		busy, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for busy.Err() == nil {
					_ = r.Presence()
					_ = r.Err()
				}
			})
		}
		defer wg.Wait()
		defer stop()
		reader := discovery.New(admin, base)
		n := 0
		for round := range 100 {
			before := r.Presence()
			if err := admin.Delete(ctx, r.Node(), -1); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(zktest.Scale(30 * time.Second))
			for r.Presence() == before || r.Presence().Err() != nil {
				n++
				upd := r.Instance()
				upd.Address = fmt.Sprintf("10.1.%d.%d", n/256, n%256)
				if err := r.Update(ctx, upd); err != nil {
					t.Fatalf("round %d: Update: %v", round, err)
				}
				if time.Now().After(deadline) {
					t.Fatalf("round %d: not registered again", round)
				}
			}
			want := r.Instance().Address
			got, err := reader.Instance(ctx, "api", "w")
			if err != nil {
				t.Fatal(err)
			}
			if got.Address != want {
				t.Fatalf("round %d: registered again with address %s, the last Update (made while registering again) was %s",
					round, got.Address, want)
			}
		}
	})
}

// An Update made right after the session expired, whose write the expiry
// cuts off, is not a conflict when zkit has meanwhile registered the
// instance again under the new session: Update returns nil, and the new
// node holds the update.
func TestUpdateRightAfterSessionExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		c := b.Connect(t)
		r, err := discovery.New(c, base).Register(ctx, instance("w", 1))
		if err != nil {
			t.Fatal(err)
		}
		reader := discovery.New(admin, base)
		for i := range 6 {
			if _, err := r.Present(ctx); err != nil {
				t.Fatal(err)
			}
			b.ExpireSession(t, c.Session())
			upd := r.Instance()
			upd.Address = fmt.Sprintf("10.0.1.%d", i)
			if err := r.Update(ctx, upd); err != nil {
				t.Fatalf("Update right after the session expired: %v", err)
			}
			if err := r.Err(); errors.Is(err, discovery.ErrConflict) {
				t.Fatalf("the registration ended: %v", err)
			}
			recipetest.Eventually(t, "the update registered again", func() bool {
				got, err := reader.Instance(ctx, "api", "w")
				return err == nil && got.Address == upd.Address && got.Stat.EphemeralOwner == c.Session().ID()
			})
		}
	})
}

// Back from a suspension during which it was updated, the registration
// adopts its node and writes the update into it; when that write loses its
// reply, the registration reads the node again instead of ending for good
// with an unknown outcome. (The reference server only: it drops the reply
// of that one write.)
func TestLostReplyOnAdoptingWrite(t *testing.T) {
	adoptThroughLostWrite(t, nil)
}

// An Update made between a lost adopting write and the claim that retries
// it is not taken for another process's write: the retrying claim finds
// its own earlier write applied and writes the new update over it.
func TestUpdateWhileAdoptingWriteRetries(t *testing.T) {
	adoptThroughLostWrite(t, func(ctx context.Context, r *discovery.Registration, upd *discovery.Instance) {
		upd.Address = "10.0.9.10"
		if err := r.Update(ctx, *upd); err != nil {
			t.Fatalf("Update while the adopting write retries: %v", err)
		}
	})
}

// adoptThroughLostWrite registers an instance on the reference server,
// updates it while its link is cut, and heals the link with the reply of
// the adopting write (the claim's, which writes the update into the node)
// dropped. With meanwhile, the link is cut again right after that write,
// and healed once meanwhile, which may update the instance again, has
// returned. Then the registration must have adopted its node, holding the
// last update.
func adoptThroughLostWrite(t *testing.T, meanwhile func(ctx context.Context, r *discovery.Registration, upd *discovery.Instance)) {
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	admin := b.Connect(t)
	base := basePath(t, admin)
	opts, cut, heal := b.Blackhole(t)
	c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(6*time.Second)))...)
	r, err := discovery.New(c, base).Register(ctx, instance("w", 1))
	if err != nil {
		t.Fatal(err)
	}
	before := r.Presence()
	cut()
	recipetest.Within(t, before.Done(), "Done after the connection was cut")
	upd := r.Instance()
	upd.Address = "10.0.9.9"
	if err := r.Update(ctx, upd); err != nil {
		t.Fatal(err)
	}
	dropped := make(chan struct{})
	var armed atomic.Bool
	armed.Store(true)
	node := r.Node()
	b.Reference().DropReplyAfterCommit(func(op, path string) bool {
		if op != "setData" || path != node || !armed.CompareAndSwap(true, false) {
			return false
		}
		if meanwhile != nil {
			cut() // the claim retries once meanwhile has returned
		}
		close(dropped)
		return true
	})
	heal()
	if meanwhile != nil {
		recipetest.Within(t, dropped, "the adopting write's reply dropped")
		meanwhile(ctx, r, &upd)
		heal()
	}
	p, err := r.Present(ctx)
	if err != nil {
		t.Fatalf("not registered again: %v", err)
	}
	if armed.Load() {
		t.Fatal("the adopting write never lost its reply")
	}
	if p.Session() != before.Session() || p.Token() != before.Token() {
		t.Fatal("the node was not adopted as it was")
	}
	got, err := discovery.New(admin, base).Instance(ctx, "api", "w")
	if err != nil || got.Address != upd.Address {
		t.Fatalf("registered as %v (%v), want the last update's address %s", got, err, upd.Address)
	}
}
