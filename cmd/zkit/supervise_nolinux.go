//go:build unix && !linux

package main

import (
	"os"
	"syscall"
)

// Other Unix systems get the same supervision (supervise.go) without
// Linux's extras: the supervisor is started from os.Executable (the binary
// at zkit's path, which should still be zkit), orphans of CMD's group are
// reaped by init rather than the supervisor, and CMD has no parent-death
// signal (only the supervisor's death without zkit's leaves CMD's group
// running: zkit kills it then).

// selfExecutable is the file to start the supervisor from: this binary.
func selfExecutable() (string, error) { return os.Executable() }

// adoptOrphans does nothing here.
func adoptOrphans() {}

// setParentDeathSignal does nothing here.
func setParentDeathSignal(*syscall.SysProcAttr) {}

// liveInGroup cannot tell zombies from running processes here.
func liveInGroup(int) (live, known bool) { return false, false }

// zombie cannot tell here.
func zombie(int) bool { return false }
