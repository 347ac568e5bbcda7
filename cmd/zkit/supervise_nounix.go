//go:build !unix

package main

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Systems without Unix process groups (Windows) get none of the
// supervision of supervise.go: CMD is started directly, is killed outright
// when zkit is told to stop or loses what it holds (Windows has no SIGTERM
// to send), processes CMD started are not followed, and nothing kills CMD
// if zkit dies.

// stopSignals are the signals that stop zkit.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// signalName is the signal's name.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// runSupervisor is false: there is no supervisor process here.
func runSupervisor([]string) (int, bool) { return 0, false }

// supervised is CMD, started directly.
type supervised struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startSupervised(argv, env []string, stdin io.Reader, stdout, stderr io.Writer, _ time.Duration) (*supervised, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &supervised{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

func (s *supervised) signal(syscall.Signal) { s.cmd.Process.Kill() }

func (s *supervised) Done() <-chan struct{} { return s.done }

func (s *supervised) wait() (int, error) {
	<-s.done
	return s.cmd.ProcessState.ExitCode(), nil
}
