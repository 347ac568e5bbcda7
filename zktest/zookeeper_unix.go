//go:build unix && !linux

package zktest

import (
	"os"
	"os/exec"
	"syscall"
)

// sysProcAttr puts the server in its own session, so that ^C in a terminal
// reaches only the test binary, which then stops it by PID.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func startProcess(cmd *exec.Cmd) error { return cmd.Start() }

// sigCont continues a stopped process (see stopProc).
var sigCont os.Signal = syscall.SIGCONT
