//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CMD runs under a supervisor: zkit starts itself again as
//
//	zkit __supervise KILL-AFTER CMD [ARGS]
//
// (superviseMain, supervisor.go) in a process group of its own, and the
// supervisor starts CMD in a second new process group, whose id is CMD's
// pid. Two pipes connect zkit and the supervisor:
//
//   - orders (zkit writes, the supervisor's fd 3): each byte is a signal
//     for CMD's group. The first starts the stop: whatever is left of the
//     group KILL-AFTER later gets SIGKILL. End of file, which the kernel
//     makes when zkit dies however it dies, SIGKILLs the group at once.
//   - report (the supervisor writes, zkit reads; its fd 4): "started PID"
//     or "failed MESSAGE", then "exited STATUS" once no process of CMD's
//     group is left (or it gave up waiting for them, killWait after
//     SIGKILL). STATUS is CMD's exit status, 128+N if signal N killed it.
//
// The supervisor exits once CMD's group is gone, whether CMD ended, zkit
// ordered a stop or zkit died: so zkit, which waits for it, releases what
// it holds only after every process of the group is gone.

// superviseArg is the hidden first argument that makes zkit a supervisor.
const superviseArg = "__supervise"

// killWait is how long the supervisor waits for CMD's group to vanish
// after SIGKILL. Only processes stuck in the kernel (uninterruptible I/O)
// outlast it; they can no longer run CMD's code.
const killWait = 5 * time.Second

// supervised is CMD running under its supervisor.
type supervised struct {
	cmd     *exec.Cmd // the supervisor
	orders  *os.File
	reports *os.File
	report  *bufio.Reader // reads reports
	pgid    int           // CMD's process group
	done    chan struct{} // closed when the supervisor has exited
}

// startSupervised starts CMD (argv) under a supervisor, with env as its
// environment and the given standard streams. It returns once CMD runs,
// or with the reason it could not start.
func startSupervised(argv, env []string, stdin io.Reader, stdout, stderr io.Writer, killAfter time.Duration) (*supervised, error) {
	exe, err := selfExecutable()
	if err != nil {
		return nil, err
	}
	ordersR, ordersW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer ordersR.Close()
	reportR, reportW, err := os.Pipe()
	if err != nil {
		ordersW.Close()
		return nil, err
	}
	defer reportW.Close()
	cmd := exec.Command(exe, append([]string{superviseArg, killAfter.String()}, argv...)...)
	cmd.Args[0] = os.Args[0] // for ps, rather than /proc/self/exe
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{ordersR, reportW} // fds 3 and 4
	// Out of zkit's process group: a SIGKILL for zkit's job leaves the
	// supervisor alive to end CMD's group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		ordersW.Close()
		reportR.Close()
		return nil, err
	}
	s := &supervised{cmd: cmd, orders: ordersW, reports: reportR, report: bufio.NewReader(reportR), done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	ordersR.Close()
	reportW.Close()
	word, rest := s.next()
	switch word {
	case "started":
		if s.pgid, _ = strconv.Atoi(rest); s.pgid > 0 {
			return s, nil
		}
		err = fmt.Errorf("the supervisor reported %q", rest)
	case "failed":
		err = fmt.Errorf("%s", rest)
	default:
		err = fmt.Errorf("the supervisor ended before it started CMD")
	}
	ordersW.Close()
	<-s.done
	reportR.Close()
	return nil, err
}

// next reads the supervisor's next report line: its first word and the
// rest. word is "" at the end of the reports.
func (s *supervised) next() (word, rest string) {
	line, err := s.report.ReadString('\n')
	if err != nil {
		return "", ""
	}
	word, rest, _ = strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	return word, rest
}

// signal has the supervisor send sig to CMD's group, and start the stop
// if it has not started yet.
func (s *supervised) signal(sig syscall.Signal) {
	s.orders.Write([]byte{byte(sig)})
}

// Done is closed when the supervisor has exited.
func (s *supervised) Done() <-chan struct{} { return s.done }

// wait waits for the supervisor to exit and returns CMD's status. If the
// supervisor died without reporting it (killed by someone), wait kills
// what is left of CMD's group itself and says so.
func (s *supervised) wait() (int, error) {
	<-s.done
	defer s.orders.Close()
	defer s.reports.Close()
	word, rest := s.next()
	if status, err := strconv.Atoi(rest); word == "exited" && err == nil {
		return status, nil
	}
	syscall.Kill(-s.pgid, syscall.SIGKILL)
	for deadline := time.Now().Add(killWait); !groupDead(s.pgid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return 0, fmt.Errorf("CMD's supervisor (pid %d) ended abnormally (%v); zkit killed CMD's process group %d", s.cmd.Process.Pid, s.cmd.ProcessState, s.pgid)
}

// groupGone reports whether no process of group pgid is left (zombies
// count as left until they are reaped: the supervisor reaps CMD for its
// status).
func groupGone(pgid int) bool {
	return syscall.Kill(-pgid, 0) == syscall.ESRCH
}

// groupDead reports whether no process of group pgid can run any more:
// none is left, or (where the system says so, see liveInGroup) only
// zombies, which nobody may reap once their supervisor was killed and init
// does not reap (as in some containers).
func groupDead(pgid int) bool {
	if groupGone(pgid) {
		return true
	}
	live, known := liveInGroup(pgid)
	return known && !live
}
