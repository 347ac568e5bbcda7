package recipes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/zkit-dev/zkit/client"
)

// Part is one lock of a joint acquisition (AcquireAll): the directory it
// locks, which orders the parts, and how to take it.
type Part struct {
	Path    string
	Acquire func(ctx context.Context) (*Lease, error)
}

// AcquireAll takes every part, all or nothing, under ctx: one after the
// other in the order of their paths (byte-wise), so that two joint
// acquisitions over overlapping sets wait for each other in one global
// order and never deadlock, and returns them as one JointLease. Paths must
// be distinct and checked by the caller; all parts must be on c.
//
// On every error (a part's, ctx's, a part lost before the last was taken)
// the parts already held are released, at once or in the background, and
// nothing is left: the error is the failing part's.
func AcquireAll(ctx context.Context, c *client.Client, parts []Part) (*JointLease, error) {
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b Part) int { return cmp.Compare(a.Path, b.Path) })
	held := make([]*Lease, 0, len(parts))
	giveBack := func() {
		for _, l := range held {
			l.Unlock(ctx)
		}
	}
	for _, p := range parts {
		l, err := p.Acquire(ctx)
		if err != nil {
			giveBack()
			return nil, err
		}
		held = append(held, l)
	}
	j, err := holdJoint(ctx, c, parts, held)
	if err != nil {
		giveBack()
		return nil, err
	}
	return j, nil
}

// JointLease is several leases held together, as one: a multi-lock. It is
// held from the moment AcquireAll returns it until Done is closed, which
// happens as soon as any part ends: Unlock (cause ErrReleased), or a
// part's loss (its cause, which matches ErrLost, naming the part's node).
//
// Token is a fencing token for the whole: TokenOf a zxid read once every
// part was held, not lower than any part's token, and higher than the
// token of any earlier joint lease that shared a part with this one. It is
// not comparable with the tokens of single leases on the same paths (a
// single lease's token comes from its node's czxid, which may predate this
// one's); a
// resource that single locks also guard checks the part's own token
// (Parts). Guard returns one guard per part, and Multi applies writes only
// while every part is held.
type JointLease struct {
	c      *client.Client
	parts  []*Lease
	token  int64
	ctx    context.Context
	cancel context.CancelCauseFunc
	once   sync.Once
	result error
}

// holdJoint makes the joint lease of held (in the order of parts). Its
// token is TokenOf the highest pzxid of the parts' directories, read now: each
// directory's pzxid is at least the zxid at which the previous holder's
// node there went away, so the token of a later joint lease sharing a
// part is higher than every zxid this one's holder saw before releasing.
func holdJoint(ctx context.Context, c *client.Client, parts []Part, held []*Lease) (*JointLease, error) {
	pzxids := make([]int64, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() {
			var b client.Backoff
			for {
				var st *client.Stat
				_, st, errs[i] = c.Exists(ctx, p.Path)
				if errs[i] == nil {
					pzxids[i] = st.Pzxid
				}
				if !client.IsRetryable(errs[i]) || b.Wait(ctx) != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	token := TokenOf(slices.Max(pzxids))
	for _, l := range held {
		if err := l.Err(); err != nil {
			return nil, fmt.Errorf("zkit: %s: %w", l.Node(), err)
		}
		token = max(token, l.Token())
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	j := &JointLease{c: c, parts: held, token: token, ctx: ctx, cancel: cancel}
	for _, l := range held {
		context.AfterFunc(l.Context(), func() {
			j.cancel(fmt.Errorf("zkit: %s: %w", l.Node(), context.Cause(l.Context())))
		})
	}
	return j, nil
}

// Parts are the leases held, in the order they were taken (by path).
func (j *JointLease) Parts() []*Lease { return slices.Clone(j.parts) }

// Token is the joint lease's fencing token; see JointLease.
func (j *JointLease) Token() int64 { return j.token }

// Done is closed when the joint lease ends; Context tells why.
func (j *JointLease) Done() <-chan struct{} { return j.ctx.Done() }

// Context ends when the joint lease ends. context.Cause gives the reason:
// ErrReleased after Unlock, otherwise the loss of a part, which matches
// ErrLost.
func (j *JointLease) Context() context.Context { return j.ctx }

// Err is nil while every part is held, then the reason the joint lease
// ended.
func (j *JointLease) Err() error { return context.Cause(j.ctx) }

// Guard returns one op per part that makes a client.Multi fail unless
// that part's node still exists: put them all in a Multi with the writes
// that must only happen while every part is held.
func (j *JointLease) Guard() []client.Op {
	ops := make([]client.Op, len(j.parts))
	for i, l := range j.parts {
		ops[i] = l.Guard()
	}
	return ops
}

// Multi applies ops atomically, and only while every part is held: it
// prepends Guard and returns the results of ops. When the joint lease has
// ended, or a guard fails on the server, nothing is applied and the error
// matches ErrLost.
func (j *JointLease) Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	if err := j.ctx.Err(); err != nil {
		return nil, context.Cause(j.ctx)
	}
	guards := j.Guard()
	res, err := j.c.Multi(ctx, append(guards, ops...)...)
	var me *client.MultiError
	if errors.As(err, &me) && me.Index >= 0 && me.Index < len(guards) {
		return nil, fmt.Errorf("zkit: %s: %w (%w)", me.Path, ErrNodeDeleted, err)
	}
	if len(res) >= len(guards) {
		res = res[len(guards):]
	}
	return res, err
}

// Unlock releases every part: Done is closed at once, then the parts are
// released together (see Lease.Unlock, whose waiting and background rules
// apply to each). It returns nil when every part was held until Unlock was
// called; otherwise the reason the joint lease had ended (matching ErrLost)
// or the parts' errors (UnlockAll). Calling Unlock again returns the same result.
func (j *JointLease) Unlock(ctx context.Context) error {
	j.once.Do(func() {
		var lost error
		if j.ctx.Err() != nil {
			lost = context.Cause(j.ctx)
		}
		j.cancel(ErrReleased)
		j.result = UnlockAll(ctx, j.parts...)
		if lost != nil {
			j.result = lost
		}
	})
	return j.result
}
