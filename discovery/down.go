package discovery

import (
	"sync"
	"time"
)

// Curator's DownInstancePolicy defaults.
const (
	defaultDownTimeout   = 30 * time.Second
	defaultDownThreshold = 2
)

// downList is what a Provider knows of instances that failed their
// callers (Curator's DownInstanceManager): an instance noted down
// threshold times within timeout of its first note is not picked until
// that timeout has passed.
type downList struct {
	timeout   time.Duration
	threshold int

	mu    sync.Mutex
	marks map[string]*downMark
}

// downMark is the errors noted for one instance since its first.
type downMark struct {
	since  time.Time
	errors int
}

func (l *downList) note(inst Instance, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.purge(now)
	k := key(inst)
	m := l.marks[k]
	if m == nil {
		if l.marks == nil {
			l.marks = map[string]*downMark{}
		}
		m = &downMark{since: now}
		l.marks[k] = m
	}
	m.errors++
}

// up reports whether inst may be picked at now.
func (l *downList) up(inst Instance, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.purge(now)
	m := l.marks[key(inst)]
	return m == nil || m.errors < l.threshold
}

// purge forgets the marks whose timeout has passed.
func (l *downList) purge(now time.Time) {
	for k, m := range l.marks {
		if now.Sub(m.since) >= l.timeout {
			delete(l.marks, k)
		}
	}
}
