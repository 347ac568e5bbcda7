package recipes

import (
	"context"
	"fmt"
	"slices"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
)

// The layout helpers of before the registry (internal/layout), while the
// recipes move to it.

var (
	LeaseKind      = Kind{Marker: "lease-", Recipe: "semaphore"}
	CounterAddKind = Kind{Marker: "add-", Exclusive: true, Recipe: "counter"}
)

const ReadyName = layout.ReadyFlag

func IsBarrierMember(name string) bool {
	return layout.DoubleBarrier.IsMember(layout.Child{Name: name})
}

func OpenBarrierOf(children []string) bool {
	return slices.Contains(children, ReadyName) && slices.ContainsFunc(children, IsBarrierMember)
}

var queuedKinds = []Kind{MutexKind, ReadKind, WriteKind, LatchKind, LeaseKind}

func QueueNodeOf(children []string) (Node, bool) {
	for _, ch := range children {
		if n, ok := ParseNode(ch, queuedKinds...); ok {
			return n, true
		}
	}
	return Node{}, false
}

func OtherRecipef(format string, args ...any) error {
	return fmt.Errorf(format+": %w; use one recipe per path", append(args, ErrOtherRecipe)...)
}

func CheckOwnNode(path string, st *client.Stat, recipe string, children bool) error {
	var what string
	switch {
	case st.EphemeralOwner != 0:
		what = fmt.Sprintf("an ephemeral node (session 0x%x)", st.EphemeralOwner)
	case !children && st.NumChildren > 0:
		what = fmt.Sprintf("a node with %d children", st.NumChildren)
	default:
		return nil
	}
	return OtherRecipef("zkit: %s is %s, not a %s's", path, what, recipe)
}

func CheckNotReadyDir(ctx context.Context, c *client.Client, path, recipe string) error {
	ready := client.JoinPath(path, ReadyName)
	var (
		found bool
		st    *client.Stat
	)
	err := c.Retry(ctx, func(ctx context.Context) (err error) {
		found, st, err = c.Exists(ctx, ready)
		return err
	})
	if err != nil {
		return err
	}
	if found && st.EphemeralOwner == 0 {
		return OtherRecipef("zkit: %s holds %s, a configuration's or a double barrier's node, not a %s's", path, ReadyName, recipe)
	}
	return nil
}
