//go:build unix && !linux

package zktest

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the server in its own session, so that ^C in a terminal
// reaches only the test binary, which then stops it by PID.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func startProcess(cmd *exec.Cmd) error { return cmd.Start() }
