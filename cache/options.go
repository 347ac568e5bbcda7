package cache

import (
	"log/slog"
	"math"
)

// Option configures Open.
type Option func(*config)

type config struct {
	depth    int
	maxNodes int
	maxBytes int64
	oneShot  bool
	logger   *slog.Logger
}

// Default limits: a cache larger than these fails with a *LimitError.
const (
	DefaultMaxNodes = 100_000
	DefaultMaxBytes = 256 << 20
)

func defaultConfig() config {
	return config{depth: math.MaxInt, maxNodes: DefaultMaxNodes, maxBytes: DefaultMaxBytes,
		logger: slog.New(slog.DiscardHandler)}
}

// WithDepth limits a tree cache to n levels below its root (0: the root
// alone, 1: the root and its children). OpenNode and OpenChildren set it.
func WithDepth(n int) Option {
	return func(c *config) { c.depth = n }
}

// WithMaxNodes bounds the number of nodes held (default
// DefaultMaxNodes): a larger tree stops the cache with a *LimitError.
func WithMaxNodes(n int) Option {
	return func(c *config) { c.maxNodes = n }
}

// WithMaxBytes bounds the bytes held, paths and data (default
// DefaultMaxBytes): a larger tree stops the cache with a *LimitError.
func WithMaxBytes(n int64) Option {
	return func(c *config) { c.maxBytes = n }
}

// WithOneShotWatches makes the cache follow the tree with one-shot watches,
// as it does by itself on servers without persistent watches (before
// ZooKeeper 3.6). It costs a watch per node and more reads, and is there
// for tests and comparisons.
func WithOneShotWatches() Option {
	return func(c *config) { c.oneShot = true }
}

// WithLogger routes the cache's log lines (connections lost and made,
// fallbacks, reloads) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}
