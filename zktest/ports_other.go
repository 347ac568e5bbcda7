//go:build !unix

package zktest

import (
	"errors"
	"os"
)

// errLockHeld is lockFile's answer when another process holds the lock.
var errLockHeld = errors.New("zktest: lock held by another process")

// lockFile cannot lock here: ports go unclaimed, checked by their bind
// alone.
func lockFile(*os.File) error { return errors.ErrUnsupported }
