package client

import "context"

// do runs a blocking wire-client call and returns early with ctx's error
// when ctx ends first. The call itself runs on until the wire client answers
// or drops it; its result is then discarded.
func do[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if ctx.Done() == nil {
		return fn()
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		select {
		case r := <-ch: // answered at the same moment: the answer wins
			return r.v, r.err
		default:
			return zero, ctx.Err()
		}
	}
}
