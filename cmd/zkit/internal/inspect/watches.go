package inspect

import (
	"sync"

	"github.com/zkit-dev/zkit/client"
)

type watchKind int

const (
	dataWatch watchKind = iota
	childWatch
	existsWatch
)

type watchKey struct {
	path string
	kind watchKind
}

// watches are the one-shot watches a Scanner has set and that have not
// fired yet. A read sets a watch only where none is set: however often a
// scan reads a node, the node carries one watch of each kind, and the
// process one goroutine per watch.
type watches struct {
	mu      sync.Mutex
	set     map[watchKey]bool
	changed chan struct{} // holds a token when a watch fired since the last take
}

func newWatches() *watches {
	return &watches{set: map[watchKey]bool{}, changed: make(chan struct{}, 1)}
}

// arm reports whether a read of path should set a watch of kind, and
// counts it as set. A nil *watches sets none.
func (w *watches) arm(path string, kind watchKind) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	k := watchKey{path, kind}
	if w.set[k] {
		return false
	}
	w.set[k] = true
	return true
}

// follow takes the channel of the watching read that arm allowed: when
// it fires, the watch is gone and a change is signalled. A read that
// failed set no watch (ch is nil), and the next read sets one.
func (w *watches) follow(path string, kind watchKind, ch <-chan client.WatchEvent, err error) {
	if ch == nil || err != nil {
		w.drop(watchKey{path, kind})
		return
	}
	go func() {
		<-ch
		w.drop(watchKey{path, kind})
		w.signal()
	}()
}

// signal tells the scanner's caller to scan again.
func (w *watches) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *watches) drop(k watchKey) {
	w.mu.Lock()
	delete(w.set, k)
	w.mu.Unlock()
}
