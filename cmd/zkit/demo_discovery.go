package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/zkit-dev/zkit/discovery"
)

// discoveryFailover: each worker registers an instance of one service,
// and a provider picks from its live view. Round robin over a stable view
// picks every instance equally often; one worker's session expires and
// its instance is registered again under a new session, which the
// provider's view shows; half the workers unregister, and the view and a
// fresh listing converge on the rest.
func discoveryFailover(ctx context.Context, d *demoEnv) (string, error) {
	cs, closeAll, err := d.connectAll(ctx, d.workers+1)
	if err != nil {
		return "", err
	}
	defer closeAll()
	base := d.path("services")
	regs := make([]*discovery.Registration, d.workers)
	for w, c := range cs[:d.workers] {
		inst := discovery.Instance{Name: "api", ID: fmt.Sprintf("w%02d", w), Address: fmt.Sprintf("10.0.0.%d", w+1), Port: 8080}
		r, err := discovery.New(c, base).Register(ctx, inst)
		if err != nil {
			return "", err
		}
		d.count(1)
		regs[w] = r
	}
	defer func() {
		for _, r := range regs {
			r.Unregister(ctx)
		}
	}()
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	reader := discovery.New(cs[d.workers], base)
	provider := reader.Provider(pctx, "api")
	all := make([]string, d.workers)
	for w := range all {
		all[w] = fmt.Sprintf("w%02d", w)
	}
	if err := converge(ctx, provider, strings.Join(all, ","), func(discovery.Instance) bool { return true }); err != nil {
		return "", violationf("the provider's view never showed the %d registered instances: %v", d.workers, err)
	}

	// Round robin over a stable view: each instance once per round.
	picks := map[string]int{}
	for range d.rounds * d.workers {
		inst, err := provider.Pick(ctx)
		if err != nil {
			return "", err
		}
		d.count(1)
		picks[inst.ID]++
	}
	for _, id := range all {
		if picks[id] != d.rounds {
			return "", violationf("round robin picked %s %d times in %d rounds", id, picks[id], d.rounds)
		}
	}

	// A session expires: the instance is registered again, and the view
	// shows its new node.
	old := regs[0].Presence()
	if err := d.expire(ctx, old.Session()); err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case <-old.Done():
	case <-wctx.Done():
		return "", violationf("instance w00 still counted present after its session expired")
	}
	p, err := regs[0].Present(wctx)
	if err != nil {
		return "", violationf("instance w00 not registered again after its session expired: %v", err)
	}
	if p.Token() <= old.Token() || p.Session().ID() == old.Session().ID() {
		return "", violationf("instance w00 present again without a new node under a new session")
	}
	d.count(1)
	fresh := func(i discovery.Instance) bool { return i.ID != "w00" || i.Stat.Czxid == p.Token() }
	if err := converge(ctx, provider, strings.Join(all, ","), fresh); err != nil {
		return "", violationf("the provider's view never showed w00's new node: %v", err)
	}

	// Half unregister: the view and a listing converge on the rest.
	var rest []string
	for w, r := range regs {
		if w%2 == 0 {
			if err := r.Unregister(ctx); err != nil {
				return "", err
			}
			d.count(1)
			continue
		}
		rest = append(rest, all[w])
	}
	if err := converge(ctx, provider, strings.Join(rest, ","), fresh); err != nil {
		return "", violationf("the provider's view never lost the unregistered instances: %v", err)
	}
	listed, err := reader.Instances(ctx, "api")
	if err != nil {
		return "", err
	}
	if got := instanceIDs(listed); got != strings.Join(rest, ",") {
		return "", violationf("Instances lists %d instances, %d are registered", len(listed), len(rest))
	}
	return fmt.Sprintf("%d instances, %d even picks; an expired instance back under its new session; %d unregistered, views converged",
		d.workers, d.rounds*d.workers, d.workers-len(rest)), nil
}

// converge waits (up to 30 s) until the provider's instances are want, ids
// comma separated, each satisfying ok.
func converge(ctx context.Context, p *discovery.Provider, want string, ok func(discovery.Instance) bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last string
	err := waitFor(ctx, func() bool {
		got, err := p.Instances(ctx)
		if err != nil {
			return false
		}
		last = instanceIDs(got)
		for _, i := range got {
			if !ok(i) {
				return false
			}
		}
		return last == want
	})
	if err != nil {
		return fmt.Errorf("last view %q: %w", last, err)
	}
	return nil
}

func instanceIDs(instances []discovery.Instance) string {
	ids := make([]string, len(instances))
	for i, inst := range instances {
		ids[i] = inst.ID
	}
	return strings.Join(ids, ",")
}
