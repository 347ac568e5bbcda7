package semaphore

import (
	"context"

	"github.com/zkit-dev/zkit/recipes"
)

// Leases are leases held together: those AcquireN returns.
type Leases []*Lease

// Unlock releases every lease of ls in one call, as Curator's returnAll
// does: all at once, each as its own Unlock does (Done closed at once, the
// node deleted while ctx allows, otherwise in the background for as long
// as the client lives), and waits for them all. One that fails does not
// stop the others: they are released all the same. Unlock returns nil when
// every lease was held until it was called; otherwise the errors of those
// that were not (lost with their session, or their node deleted: the
// errors match ErrLost) or whose delete ctx cut short, each naming its
// node, joined with errors.Join. Calling it again returns the same errors.
func (ls Leases) Unlock(ctx context.Context) error { return recipes.UnlockAll(ctx, ls...) }
