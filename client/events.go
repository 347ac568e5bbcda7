package client

import "sync"

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

// Subscription receives every event of a client, in order, none dropped: a
// slow reader only makes its own queue grow. Close it when done.
//
// A subscription runs a goroutine from the first call to Events until its
// channel is closed (after the client's StateClosed event has been read,
// or Close). A subscription whose Events is never called has none; if the
// client is closed first, Events then returns every queued event on a
// channel that is already closed.
type Subscription struct {
	hub    *hub
	out    chan Event // made by the first call to Events
	mu     sync.Mutex
	queue  []Event
	wake   chan struct{}
	done   chan struct{} // Close called
	ending bool          // client closed: drain then close out
	once   sync.Once
}

// Events returns the channel of events. It is closed after the StateClosed
// event, or when the subscription is closed.
func (s *Subscription) Events() <-chan Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out != nil {
		return s.out
	}
	select {
	case <-s.done:
		s.out = make(chan Event)
		close(s.out)
		return s.out
	default:
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

// Close stops the subscription; queued events are discarded.
func (s *Subscription) Close() {
	s.once.Do(func() {
		close(s.done)
		s.hub.remove(s)
	})
}

func (s *Subscription) push(ev Event, last bool) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	if last {
		s.ending = true
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
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
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

func newHub() *hub { return &hub{subs: map[*Subscription]struct{}{}} }

func (h *hub) subscribe() *Subscription {
	s := &Subscription{hub: h, wake: make(chan struct{}, 1), done: make(chan struct{})}
	h.mu.Lock()
	if h.closed {
		s.ending = true
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
		s.push(ev, last)
	}
	if last {
		h.closed = true
		h.subs = nil
	}
}
