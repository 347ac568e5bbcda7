package barrier

import (
	"sync"

	"github.com/zkit-dev/zkit/client"
)

// maxKnownDirs bounds the directories a client remembers having seen (see
// dirKnown); the memory is cleared when it is full.
const maxKnownDirs = 1024

// knownDirs is the set behind dirKnown and sawDir, one per client.
type knownDirs struct {
	mu   sync.Mutex
	dirs map[string]bool
}

type knownDirsKey struct{}

func knownDirsOf(c *client.Client) *knownDirs {
	k, _ := c.Local().LoadOrStore(knownDirsKey{}, &knownDirs{})
	return k.(*knownDirs)
}

// dirKnown reports whether c recently saw dir exist (sawDir). It is a
// hint for the order of a member's first requests, never a guarantee: a
// container directory is deleted by the server once it is empty. A member
// that joins a directory c has not seen (most likely one made for this
// use, a barrier's path per phase, which all members reach at once)
// creates it before its own node: one request each, where a create that
// fails with NoNode, the directory, and the create again cost three. One
// that c has seen is joined directly, and a create that still fails with
// NoNode makes the directory as usual.
func dirKnown(c *client.Client, dir string) bool {
	k := knownDirsOf(c)
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dirs[dir]
}

// sawDir records that dir exists: a node was just created in it.
func sawDir(c *client.Client, dir string) {
	k := knownDirsOf(c)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dirs == nil || len(k.dirs) >= maxKnownDirs {
		k.dirs = make(map[string]bool)
	}
	k.dirs[dir] = true
}
