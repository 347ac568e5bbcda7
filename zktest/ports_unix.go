//go:build unix

package zktest

import (
	"errors"
	"os"
	"syscall"
)

// errLockHeld is lockFile's answer when another process holds the lock.
var errLockHeld = errors.New("zktest: lock held by another process")

// lockFile takes an exclusive lock on f without waiting; the lock goes
// when f is closed or the process ends.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLockHeld
	}
	return err
}
