package election

import (
	"context"
	"errors"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// resignTimeout bounds how long Run waits for a resignation's delete
// before handing it to the background.
const resignTimeout = 10 * time.Second

// Run is Curator's LeaderSelector with autoRequeue: it campaigns, runs
// lead with each term it wins, and campaigns again after the term, until
// ctx ends. Without a requeue pause, a term that lead gave up is handed
// over with Term.Requeue: the resignation and the next candidacy in one
// transaction.
//
// lead's context ends when the term does (session lost, connection
// suspended beyond the tolerance, node deleted: context.Cause matches
// ErrLost) or when ctx ends (the cause is ctx's). Run waits for lead to
// return, resigns (a no-op for a term already lost), and campaigns again
// at the back of the election: after at least the pause of
// WithRequeuePause since the term ended, and, after a session loss, under
// the client's next session. So one Run never runs two leads at once, and
// a candidate that holds on to nothing lets the others lead in turn.
//
// lead returning nil is the end of a term the candidate gave up; Run
// resigns and campaigns again. lead returning an error while its term
// still lasts and ctx has not ended stops Run: it resigns and returns
// that error as it is. Once the term was lost, what lead returns is taken
// to be the consequence, and Run campaigns again.
//
// Run returns nil once ctx has ended, lead has returned and the candidate
// has resigned (its node deleted, or handed to the background after a
// bounded wait; at once when ctx ends while Run hands a term over with
// Requeue), or when lead returned an error, that error. It returns
// Campaign's errors that campaigning again cannot cure: an
// *client.InputError, client.ErrClosed, or a refusal by the server (no
// permission, another recipe on the path). A session lost while
// campaigning is not one of them: Run campaigns again.
//
// Between the loss of a term and the moment lead sees its context end,
// another candidate may already lead: fence lead's writes with term.Multi
// (or term.Guard) and term.Token, as for any Term.
func (e *Election) Run(ctx context.Context, lead func(ctx context.Context, term *Term) error) error {
	var prev *Term // a term given up, to hand over with Requeue
	for {
		var (
			term *Term
			err  error
		)
		if prev != nil {
			term, err = prev.Requeue(ctx)
			prev = nil
		} else {
			term, err = e.Campaign(ctx)
		}
		switch {
		case ctx.Err() != nil:
			if term != nil {
				resign(term)
			}
			return nil
		case err != nil && errors.Is(err, ErrLost) && !errors.Is(err, client.ErrClosed):
			// The session was lost while waiting: campaign again.
		case err != nil:
			return err
		default:
			requeue, err := e.lead(ctx, term, lead)
			if err != nil {
				return err
			}
			if requeue {
				prev = term
				continue
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := e.requeuePause(ctx); err != nil {
			return nil
		}
	}
}

// lead runs fn for one term, then resigns, or reports requeue when Run is
// to campaign again at once from a term that fn gave up while it lasted:
// then Run resigns with Term.Requeue, one request less. It returns fn's
// error when the term lasted until fn returned it and ctx has not ended.
func (e *Election) lead(ctx context.Context, term *Term, fn func(context.Context, *Term) error) (requeue bool, err error) {
	tctx, cancel := context.WithCancelCause(term.Context())
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	err = fn(tctx, term)
	stop()
	cancel(nil)
	held := term.Err() == nil
	if err == nil && held && ctx.Err() == nil && e.cfg.requeuePause <= 0 {
		return true, nil
	}
	resign(term)
	if err != nil && held && ctx.Err() == nil {
		return false, err
	}
	return false, nil
}

// resign ends a term, waiting a bounded time for its node's delete.
func resign(term *Term) {
	ctx, cancel := context.WithTimeout(context.Background(), resignTimeout)
	defer cancel()
	term.Resign(ctx)
}

// requeuePause waits the pause of WithRequeuePause, or until ctx ends.
func (e *Election) requeuePause(ctx context.Context) error {
	if e.cfg.requeuePause <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(e.cfg.requeuePause)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WithRequeuePause makes Run wait at least d after a term ends (or a
// campaign fails with a lost session) before it campaigns again. The
// default, 0, campaigns again at once, at the back of the election: a
// lead that returns at once then makes its candidate resign and rejoin
// in a loop, as Curator's LeaderSelector with autoRequeue does.
func WithRequeuePause(d time.Duration) Option {
	return func(c *config) { c.requeuePause = d }
}
