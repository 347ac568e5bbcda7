package client

import (
	"errors"
	"fmt"
	"sync"
)

// State is a change in the client's connection or session.
type State int

// The states a subscriber sees, in the order they can happen.
const (
	StateNone        State = iota // a watch event, not a state change
	StateConnected                // a new session is established
	StateSuspended                // disconnected; the session may still live
	StateReconnected              // connected again to the same session
	StateLost                     // the session is gone
	StateClosed                   // the client was closed; the last event
	StateAuthFailed               // the server refused the credentials
)

var stateNames = [...]string{"None", "Connected", "Suspended", "Reconnected", "Lost", "Closed", "AuthFailed"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(?)"
}

// EventType is the kind of a watch event.
type EventType int

// Watch event types, numbered as ZooKeeper numbers them on the wire.
const (
	EventNone                EventType = 0
	EventNodeCreated         EventType = 1
	EventNodeDeleted         EventType = 2
	EventNodeDataChanged     EventType = 3
	EventNodeChildrenChanged EventType = 4
	// EventNotWatching: the watch was dropped without firing (session lost
	// or client closed); WatchEvent.Err says why.
	EventNotWatching EventType = -2
)

var eventNames = map[EventType]string{
	EventNone:                "None",
	EventNodeCreated:         "EventNodeCreated",
	EventNodeDeleted:         "EventNodeDeleted",
	EventNodeDataChanged:     "EventNodeDataChanged",
	EventNodeChildrenChanged: "EventNodeChildrenChanged",
	EventNotWatching:         "NotWatching",
	EventResync:              "Resync",
}

func (t EventType) String() string {
	if name, ok := eventNames[t]; ok {
		return name
	}
	return "Unknown"
}

// Event is what subscribers receive: a state change (State != StateNone) or
// a watch event (Type and Path set, and Zxid when the server says it).
type Event struct {
	State   State
	Type    EventType
	Path    string
	Zxid    int64    // a watch event's, as WatchEvent.Zxid
	Session *Session // the session the event concerns (nil before the first)
}

// WatchEvent is delivered once on the channel a watching call returns.
type WatchEvent struct {
	Type EventType
	Path string
	// Zxid is the zxid of the transaction that fired the event (the
	// create, delete or write), when the server says it: ZooKeeper 3.9
	// and later send it with the event. It is 0 when the server does not
	// say: ZooKeeper before 3.9, and the reference server unless
	// configured otherwise, send -1 in its place, and so does the
	// reference server for an event it fires when a watch is set again on
	// a new connection (its node changed while the client was away, by a
	// transaction it does not name). EventNotWatching has none.
	Zxid int64
	Err  error // set with EventNotWatching
}

// eventZxid is the Zxid of an event whose notification's reply header
// carries zxid: 0 when the server said nothing (-1).
func eventZxid(zxid int64) int64 { return max(zxid, 0) }

// DefaultSubscriptionBuffer is how many unread events a subscription holds
// unless WithSubscriptionBuffer says otherwise. State changes are few, a
// handful per reconnect; what grows is watch events, all of the client's,
// which a server can send faster than a busy reader takes them. At about
// 100 bytes each with a short path, 10,000 events are about a megabyte,
// taken only as the queue fills: room for any burst a reader that keeps up
// meets, and a bound on one that does not.
const DefaultSubscriptionBuffer = 10_000

// ErrSubscriptionOverflow ends a subscription whose reader fell further
// behind than its buffer (WithSubscriptionBuffer): the client does not hold
// events without bound. Subscribe again, and read again what the events
// were about.
var ErrSubscriptionOverflow = errors.New("zkit: subscription overflowed: its reader fell behind")

// Subscription receives every event of a client, in order, up to a bound:
// it holds the events its reader has not taken, at most the client's
// WithSubscriptionBuffer (DefaultSubscriptionBuffer), and an event that
// finds them that many ends it. Its queued events are then discarded, its
// channel is closed, and Err matches ErrSubscriptionOverflow: a reader
// that falls behind loses its subscription, not the client its memory.
// Close it when done.
//
// A subscription runs a goroutine from the first call to Events until its
// channel is closed (after the client's StateClosed event has been read,
// or Close, or an overflow). A subscription whose Events is never called
// has none; if the client is closed first, Events then returns every
// queued event on a channel that is already closed.
type Subscription struct {
	hub     *hub
	limit   int        // unread events held at most
	out     chan Event // made by the first call to Events
	mu      sync.Mutex
	queue   []Event
	wake    chan struct{}
	done    chan struct{} // closed when stopped
	stopped bool          // by Close or an overflow: queue discarded
	ending  bool          // client closed: drain then close out
	err     error         // see Err
}

// Events returns the channel of events. It is closed after the StateClosed
// event, when the subscription is closed, or when it overflows; Err then
// says which.
func (s *Subscription) Events() <-chan Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out != nil {
		return s.out
	}
	if s.stopped {
		s.out = make(chan Event)
		close(s.out)
		return s.out
	}
	if s.ending {
		// The client is closed: nothing more will come, so hand over what
		// is queued without a goroutine.
		s.out = make(chan Event, len(s.queue))
		for _, ev := range s.queue {
			s.out <- ev
		}
		s.queue = nil
		close(s.out)
		return s.out
	}
	s.out = make(chan Event)
	go s.run()
	return s.out
}

// Err is nil while the subscription runs and after Close; otherwise why it
// ends: ErrClosed once the client is closed (its StateClosed event is the
// last, then the channel is closed), or an error matching
// ErrSubscriptionOverflow, with the number of events that were unread,
// once its reader fell behind (the channel is closed at once). The first
// reason stays: a Close after either changes nothing.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close stops the subscription; queued events are discarded.
func (s *Subscription) Close() {
	s.mu.Lock()
	s.stopLocked(nil)
	s.mu.Unlock()
	s.hub.remove(s)
}

// stopLocked stops s, unless it is stopped, for why (nil: Close): its
// queued events are discarded, and its channel is closed.
func (s *Subscription) stopLocked(why error) {
	if s.stopped {
		return
	}
	s.stopped, s.queue = true, nil
	if s.err == nil {
		s.err = why
	}
	close(s.done)
}

// push queues ev (last: the client's final event) and reports whether s
// overflowed, which stopped it.
func (s *Subscription) push(ev Event, last bool) (overflowed bool) {
	s.mu.Lock()
	switch {
	case s.stopped:
		s.mu.Unlock()
		return false
	case len(s.queue) >= s.limit:
		s.stopLocked(fmt.Errorf("%w (%d events unread)", ErrSubscriptionOverflow, s.limit))
		s.mu.Unlock()
		return true
	}
	s.queue = append(s.queue, ev)
	if last {
		s.ending, s.err = true, ErrClosed
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return false
}

func (s *Subscription) run() {
	defer close(s.out)
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			ending := s.ending
			s.mu.Unlock()
			if ending {
				return
			}
			select {
			case <-s.wake:
				continue
			case <-s.done:
				return
			}
		}
		ev := s.queue[0]
		s.queue[0] = Event{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		select {
		case s.out <- ev:
		case <-s.done:
			return
		}
	}
}

// hub fans events out to subscribers.
type hub struct {
	limit  int // of each subscription's unread events
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

func newHub(limit int) *hub { return &hub{limit: limit, subs: map[*Subscription]struct{}{}} }

func (h *hub) subscribe() *Subscription {
	s := &Subscription{hub: h, limit: h.limit, wake: make(chan struct{}, 1), done: make(chan struct{})}
	h.mu.Lock()
	if h.closed {
		s.ending, s.err = true, ErrClosed
	} else {
		h.subs[s] = struct{}{}
	}
	h.mu.Unlock()
	return s
}

func (h *hub) remove(s *Subscription) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// publish queues ev for every subscriber; last marks the final event.
func (h *hub) publish(ev Event, last bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for s := range h.subs {
		if s.push(ev, last) {
			delete(h.subs, s)
		}
	}
	if last {
		h.closed = true
		h.subs = nil
	}
}
