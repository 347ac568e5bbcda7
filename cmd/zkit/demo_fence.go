package main

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
)

// fence is a resource that only accepts work from the current holder of
// a lock or a leadership: it counts holders inside and refuses tokens
// lower than one it has seen. Demo steps check mutual exclusion with it.
type fence struct {
	inside     atomic.Int32
	mu         sync.Mutex
	last       int64
	handed     int64 // holders whose token was their predecessor's plus one: a hand-over within a process
	violations []string
}

// enter records a holder with token coming in.
func (f *fence) enter(token int64) {
	if n := f.inside.Add(1); n != 1 {
		f.violate("%d holders at once", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if token <= f.last {
		f.violations = append(f.violations, fmt.Sprintf("token %d after %d", token, f.last))
	}
	if token == f.last+1 {
		f.handed++
	}
	f.last = token
}

// local is how many holders took over within a process (lock combining).
func (f *fence) local() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handed
}

func (f *fence) leave() { f.inside.Add(-1) }

func (f *fence) violate(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
}

// err is the first violation as a violation error, or nil.
func (f *fence) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.violations) == 0 {
		return nil
	}
	return violationf("%d violations, first: %s", len(f.violations), f.violations[0])
}

// encode and decode are the 8-byte big-endian counters the steps keep in
// znodes.
func encode(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func decode(b []byte) int64 {
	if len(b) != 8 {
		return -1
	}
	return int64(binary.BigEndian.Uint64(b))
}
