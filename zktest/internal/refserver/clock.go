package refserver

import (
	"sync"
	"time"
)

// clock is the server's notion of time: a base clock (time.Now) plus an
// offset that FastForward advances. Session expiry, TTL and container
// reaping and the ctime/mtime of znodes all read it.
type clock struct {
	base   func() time.Time
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	off := c.offset
	c.mu.Unlock()
	return c.base().Add(off)
}

// nowMillis returns the clock in milliseconds since the Unix epoch, as
// ZooKeeper stores ctime and mtime.
func (c *clock) nowMillis() int64 { return c.now().UnixMilli() }

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}
