package recipes

import (
	"time"

	"github.com/zkit-dev/zkit/client"
)

// Fired returns a watch channel that has fired already: for a read
// function of Follow that must read again at once (the node it waited for
// appeared meanwhile), or a loop that must look again.
func Fired() <-chan client.WatchEvent {
	ch := make(chan client.WatchEvent, 1)
	ch <- client.WatchEvent{Type: client.EventNodeDataChanged}
	return ch
}

// firedAfter returns a watch channel that fires after d.
func firedAfter(d time.Duration) <-chan client.WatchEvent {
	ch := make(chan client.WatchEvent, 1)
	time.AfterFunc(d, func() { ch <- client.WatchEvent{Type: client.EventNodeDataChanged} })
	return ch
}
