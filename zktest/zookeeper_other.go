//go:build !unix

package zktest

import (
	"os"
	"os/exec"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func startProcess(cmd *exec.Cmd) error { return cmd.Start() }

// sigCont is nil: there is no signal that continues a stopped process.
var sigCont os.Signal
