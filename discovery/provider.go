package discovery

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// ProviderOption configures a Provider.
type ProviderOption func(*providerConfig)

type providerConfig struct {
	strategy      Strategy
	filters       []func(Instance) bool
	downTimeout   time.Duration
	downThreshold int
}

// WithStrategy makes the provider pick with s (default RoundRobin()).
func WithStrategy(s Strategy) ProviderOption {
	return func(c *providerConfig) { c.strategy = s }
}

// WithFilter makes the provider return only instances for which keep
// returns true (Curator's additionalFilter). Filters add up: an instance
// must pass every one. keep must not block; a nil keep filters nothing
// out.
func WithFilter(keep func(Instance) bool) ProviderOption {
	return func(c *providerConfig) {
		if keep != nil {
			c.filters = append(c.filters, keep)
		}
	}
}

// WithDownPolicy sets when an instance noted down (NoteError) is no longer
// picked (Curator's DownInstancePolicy): once it was noted threshold times
// within timeout of its first note, until that timeout has passed. The
// default is Curator's: 2 errors, 30 seconds; a timeout or threshold that
// is not positive keeps its default.
func WithDownPolicy(timeout time.Duration, threshold int) ProviderOption {
	return func(c *providerConfig) { c.downTimeout, c.downThreshold = timeout, threshold }
}

// Provider picks instances of one service for a caller to use (Curator's
// ServiceProvider): from a live view of the service's instances (Watch),
// it returns those that are enabled, pass its filters and are not noted
// down, picked by its Strategy. It is safe for concurrent use.
//
// The view is level-triggered: after churn or a reconnect it is the true
// set of instances once read again. While the connection is suspended, or
// the client replaces a lost session, the view is the last one read:
// ZooKeeper cannot say meanwhile which instances are still there, and the
// instances themselves are not held by the provider. A caller that finds
// an instance not answering notes it (NoteError) and picks again.
type Provider struct {
	path  string
	cfg   providerConfig
	down  downList
	view  atomic.Pointer[[]Instance] // the latest view, once there is one
	ready chan struct{}              // closed once there is a view, or following ended
	done  chan struct{}              // closed when following ended
	err   error                      // why; set before done is closed
}

// Provider returns a provider of service's instances, following them (in
// the background, with Watch) until ctx ends. It returns at once; Pick and
// Instances wait for the first view. An invalid base or service name is an
// *client.InputError from Pick and Instances, before anything is sent.
func (d *Discovery) Provider(ctx context.Context, service string, opts ...ProviderOption) *Provider {
	cfg := providerConfig{strategy: RoundRobin(), downTimeout: defaultDownTimeout, downThreshold: defaultDownThreshold}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.downTimeout <= 0 {
		cfg.downTimeout = defaultDownTimeout
	}
	if cfg.downThreshold <= 0 {
		cfg.downThreshold = defaultDownThreshold
	}
	if cfg.strategy == nil {
		cfg.strategy = RoundRobin()
	}
	p := &Provider{
		path:  client.JoinPath(d.base, service),
		cfg:   cfg,
		down:  downList{timeout: cfg.downTimeout, threshold: cfg.downThreshold},
		ready: make(chan struct{}),
		done:  make(chan struct{}),
	}
	feed := d.Watch(ctx, service)
	go p.follow(feed)
	return p
}

// follow keeps the latest view of feed until it ends.
func (p *Provider) follow(feed *recipes.Feed[[]Instance]) {
	first := true
	for v := range feed.Values() {
		p.view.Store(&v)
		if first {
			close(p.ready)
			first = false
		}
	}
	p.err = feed.Err()
	close(p.done)
	if first {
		close(p.ready) // after done: a view is there unless done is closed
	}
}

// Done is closed when the provider stops following the service: its
// context ended, the client was closed, or the input was invalid. Err
// then says why.
func (p *Provider) Done() <-chan struct{} { return p.done }

// Err is nil while the provider follows the service, then why it stopped.
func (p *Provider) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Instances returns the instances the provider may pick now, sorted by
// node name (Curator's getAllInstances). It waits within ctx for the
// provider's first view of the service. Once the provider has stopped it
// returns why (Err).
func (p *Provider) Instances(ctx context.Context) ([]Instance, error) {
	all, err := p.current(ctx)
	if err != nil {
		return nil, recipes.Wrap("instances", p.path, err)
	}
	now := time.Now()
	out := make([]Instance, 0, len(all))
	for _, inst := range all {
		if p.usable(inst, now) {
			out = append(out, inst)
		}
	}
	return out, nil
}

// Pick returns an instance to use now, chosen by the provider's strategy
// among Instances (Curator's getInstance). It returns an error matching
// ErrNoInstance when there is none. It waits within ctx for the
// provider's first view of the service; once the provider has stopped it
// returns why (Err). Use the instance for one call and pick again for the
// next: the view changes.
func (p *Provider) Pick(ctx context.Context) (Instance, error) {
	usable, err := p.Instances(ctx)
	if err != nil {
		return Instance{}, recipes.Wrap("pick", p.path, err)
	}
	if len(usable) == 0 {
		return Instance{}, recipes.Wrap("pick", p.path, ErrNoInstance)
	}
	inst, ok := p.cfg.strategy.Pick(usable)
	if !ok {
		return Instance{}, recipes.Wrap("pick", p.path, ErrNoInstance)
	}
	return inst, nil
}

// NoteError notes that inst failed its caller (Curator's noteError): see
// WithDownPolicy.
func (p *Provider) NoteError(inst Instance) { p.down.note(inst, time.Now()) }

// current waits for the latest view.
func (p *Provider) current(ctx context.Context) ([]Instance, error) {
	select {
	case <-p.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-p.done:
		return nil, p.err
	default:
		return *p.view.Load(), nil
	}
}

// usable reports whether inst may be picked at now.
func (p *Provider) usable(inst Instance, now time.Time) bool {
	if inst.Disabled || !p.down.up(inst, now) {
		return false
	}
	for _, keep := range p.cfg.filters {
		if !keep(inst) {
			return false
		}
	}
	return true
}
