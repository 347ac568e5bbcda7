package main

import "syscall"

// What Linux adds to the supervision (supervise.go): the supervisor
// re-executes the very binary that runs (even if it was replaced on disk
// since), it adopts the orphans of CMD's group so that their zombies are
// reaped (a container's PID 1 may never reap them), and CMD dies with the
// supervisor if someone kills the supervisor itself.

// selfExecutable is the file to start the supervisor from: this binary.
func selfExecutable() (string, error) { return "/proc/self/exe", nil }

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// adoptOrphans makes the supervisor the parent of every process of CMD's
// that loses its own parent, so that the supervisor reaps it.
func adoptOrphans() {
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// setParentDeathSignal has CMD get SIGKILL when the supervisor's forking
// thread exits (the supervisor locks it for its whole life). Go's fork
// checks the race where the supervisor died before the prctl.
func setParentDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
