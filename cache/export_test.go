package cache

import "sync"

var hooks struct {
	sync.Mutex
	fns map[string]func(*Snapshot)
}

func init() {
	hooks.fns = map[string]func(*Snapshot){}
	publishHook = func(s *Snapshot) {
		hooks.Lock()
		f := hooks.fns[s.root]
		hooks.Unlock()
		if f != nil {
			f(s)
		}
	}
}

// OnPublish calls fn with every snapshot a cache rooted at root takes, from
// now on, until the returned function is called.
func OnPublish(root string, fn func(*Snapshot)) (stop func()) {
	hooks.Lock()
	defer hooks.Unlock()
	hooks.fns[root] = fn
	return func() {
		hooks.Lock()
		delete(hooks.fns, root)
		hooks.Unlock()
	}
}

// SessionOf returns the session the cache runs on: its client's.
func SessionOf(c *Cache) (int64, []byte) {
	s := c.cl.Session()
	return s.ID(), s.Password()
}

// Wanted returns the highest zxid a WaitFor has waited for.
func Wanted(c *Cache) int64 { return c.wanted() }

// OptionHook is an option that calls fn when Open applies it.
func OptionHook(fn func()) Option { return func(*config) { fn() } }
