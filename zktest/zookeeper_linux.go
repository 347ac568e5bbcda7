package zktest

import (
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// sysProcAttr puts the server in its own session (so that ^C in a terminal
// reaches only the test binary, which then stops it by PID) and asks the
// kernel to SIGKILL it if the test binary dies without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

// Pdeathsig fires when the thread that forked the child exits, not the
// process, and the Go runtime may retire threads. So every server is forked
// from one goroutine (forkLoop) locked to its thread for the life of the
// process; see "Goroutines" in the package documentation.
var forker = sync.OnceValue(func() chan startReq {
	ch := make(chan startReq)
	go forkLoop(ch)
	return ch
})

// forkLoop starts the servers' processes, on a thread of its own.
func forkLoop(ch chan startReq) {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the process
	for r := range ch {
		r.done <- r.cmd.Start()
	}
}

func startProcess(cmd *exec.Cmd) error {
	r := startReq{cmd: cmd, done: make(chan error, 1)}
	forker() <- r
	return <-r.done
}

// sigCont continues a stopped process (see stopProc).
var sigCont os.Signal = syscall.SIGCONT
