package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// stopError is the cause of the command's context once zkit got a stop
// signal.
type stopError struct{ sig syscall.Signal }

func (e *stopError) Error() string { return "stopped by " + signalName(e.sig) }

// notifyStops returns a context that ends with a *stopError at the first
// stop signal, and a channel that carries every stop signal, the first
// included, in the order they came. A signal is on the channel before the
// context ends with it. stop undoes the notification.
func notifyStops(parent context.Context) (ctx context.Context, signals <-chan os.Signal, stop func()) {
	var caught []os.Signal
	for _, s := range stopSignals {
		if !signal.Ignored(s) {
			caught = append(caught, s)
		}
	}
	in := make(chan os.Signal, 8)
	out := make(chan os.Signal, 8)
	signal.Notify(in, caught...)
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-in:
				select {
				case out <- s:
				default: // nobody is forwarding them: the first one counts
				}
				cancel(&stopError{s.(syscall.Signal)})
			case <-done:
				return
			}
		}
	}()
	return ctx, out, func() {
		signal.Stop(in)
		close(done)
		cancel(nil)
	}
}

// stoppedBy is the signal that ended ctx, or 0.
func stoppedBy(ctx context.Context) syscall.Signal {
	if e, ok := context.Cause(ctx).(*stopError); ok {
		return e.sig
	}
	return 0
}
