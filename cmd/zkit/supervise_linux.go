package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

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

// liveInGroup reports whether a process of group pgid that is not a zombie
// is left, from /proc: a zombie has exited and can do nothing more.
func liveInGroup(pgid int) (live, known bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if state, group, ok := procStat(e.Name()); ok && group == pgid && state != 'Z' {
			return true, true
		}
	}
	return false, true
}

// procStat reads a process's state and process group from /proc/PID/stat.
func procStat(pid string) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and parens.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	return f[0][0], g, err == nil
}

// zombie reports whether process pid has exited and waits to be reaped.
func zombie(pid int) bool {
	state, _, ok := procStat(strconv.Itoa(pid))
	return ok && state == 'Z'
}
