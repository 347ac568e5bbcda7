package cache

import "github.com/zkit-dev/zkit/client"

// One-shot mode.
//
// On a server without persistent watches the cache sets one-shot watches
// with its reads (GetW, ChildrenW, and ExistsW for a root that does not
// exist), and reads a node again, setting its watch again, when the watch
// fires. The client keeps them across reconnects of the session
// (SetWatches fires at once those whose node changed meanwhile), so the
// cache keeps what its reads set, per node and kind, for as long as the
// session lives: a watch still set makes the next read of its node a
// plain read, and a node never holds more than one of each kind.
//
// A watch's event is in its channel before the reply of any call the
// server answered after it reaches its caller (see client.Watch): the
// engine looks at every channel before it takes a snapshot, as it takes
// what its persistent watch's feed holds. It learns of events between
// snapshots from the client's subscription, which follows the channels;
// should the cache fall behind that (client.ErrSubscriptionOverflow), it
// subscribes again and looks at every channel.

// armed is what the cache holds of the one-shot watches its reads set:
// a list, which the engine looks through before every snapshot (a
// channel's length says whether its watch fired, without a receive), and
// where each watch is, by node and kind.
type armed struct {
	at   map[armKey]int // index in list
	list []armEntry
}

type armKey struct {
	path string
	kind armKind
}

type armKind uint8

const (
	armData  armKind = iota // GetW, or ExistsW on a node
	armChild                // ChildrenW
	armExist                // ExistsW on no node
)

type armEntry struct {
	key armKey
	ch  <-chan client.WatchEvent
}

func newArmed() *armed { return &armed{at: map[armKey]int{}} }

func (a *armed) has(path string, kind armKind) bool {
	_, ok := a.at[armKey{path, kind}]
	return ok
}

// forRead reports whether read r is to set its watch: none of its kind is
// set on its node. Always false in persistent mode (a nil armed).
func (a *armed) forRead(r request) bool {
	switch {
	case a == nil:
		return false
	case r.op == readData:
		return !a.has(r.path, armData)
	case r.op == readChildren:
		return !a.has(r.path, armChild)
	case r.op == readExists:
		return !a.has(r.path, armExist) && !a.has(r.path, armData)
	}
	return false
}

// file keeps the watch res set, if any.
func (a *armed) file(res result) {
	if a == nil || res.watch == nil {
		return
	}
	kind := armData
	switch {
	case res.r.op == readChildren:
		kind = armChild
	case res.r.op == readExists && !res.exists:
		kind = armExist
	}
	k := armKey{res.r.path, kind}
	if i, ok := a.at[k]; ok {
		a.list[i].ch = res.watch
		return
	}
	a.at[k] = len(a.list)
	a.list = append(a.list, armEntry{k, res.watch})
}

// poll returns the events of the watches on path that fired, and forgets
// those watches.
func (a *armed) poll(path string) []client.WatchEvent {
	var fired []client.WatchEvent
	for _, kind := range []armKind{armData, armChild, armExist} {
		if i, ok := a.at[armKey{path, kind}]; ok && len(a.list[i].ch) > 0 {
			fired = append(fired, a.take(i))
		}
	}
	return fired
}

// pollAll returns the events of every watch that fired, and forgets those
// watches.
func (a *armed) pollAll() []client.WatchEvent {
	var fired []client.WatchEvent
	for i := len(a.list) - 1; i >= 0; i-- {
		if len(a.list[i].ch) > 0 {
			fired = append(fired, a.take(i))
		}
	}
	return fired
}

// take receives the event of the watch at i, which fired, and forgets the
// watch (the last takes its place in the list).
func (a *armed) take(i int) client.WatchEvent {
	ev := <-a.list[i].ch
	delete(a.at, a.list[i].key)
	last := len(a.list) - 1
	if i != last {
		a.list[i] = a.list[last]
		a.at[a.list[i].key] = i
	}
	a.list[last] = armEntry{}
	a.list = a.list[:last]
	return ev
}
