package process

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// GuardArg is argv[1] of the process guard: the running binary re-entered as a helper.
// Hidden: not a command users run.
const GuardArg = "__executor-process-guard"

// init runs the guard when this binary was started as one. It lives in init, not in a
// function main must remember to call, so that every binary able to start a Guard — the
// executor and every test binary linking this package — is also one that runs it: a
// binary that ignored GuardArg would run its whole program (or test suite) again as the
// "guard".
func init() {
	if len(os.Args) == 2 && os.Args[1] == GuardArg {
		os.Exit(runGuard(os.Stdin))
	}
}

// guardGrace is how long the guard waits between SIGTERM and SIGKILL to the groups it
// kills when the executor died: the leaders also got SIGTERM from Pdeathsig (as with the
// reference), and one second lets them clean up before the group is killed.
const guardGrace = time.Second

// Guard is the helper process that makes every process group the executor started die with
// it, even after `kill -9` of the executor (which runs no code of ours). Pdeathsig reaches
// only each group's leader; the guard reaches the rest.
//
// Protocol: the executor holds the write end of a pipe whose read end is the guard's stdin,
// and writes one line per change: "+PGID" when a group starts, "-PGID" when its process
// entry is gone. The guard ignores SIGINT/SIGTERM/SIGHUP and leads its own session, so
// only the pipe's EOF — the executor's exit, clean or not (the kernel closes the write
// end) — ends it. It then sends SIGTERM to every group it holds and to every process
// whose process group or session is one of them, waits guardGrace, sends SIGKILL the same
// way, and exits.
//
// Limits: a descendant that started a new session of its own (setsid, a daemon) is out
// of reach; groups untracked once their entry was evicted (30 s after close) too.
//
// Methods are safe for concurrent use. Writes go to a pipe the guard drains at once; if
// the guard is gone they fail silently (the processes then rely on Pdeathsig alone).
type Guard struct {
	// mu serialises line writes and Close.
	mu     sync.Mutex
	w      io.WriteCloser
	wait   func() error
	closed bool
}

func (g *Guard) send(op byte, pgid int) {
	if g == nil || pgid <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	_, _ = fmt.Fprintf(g.w, "%c%d\n", op, pgid)
}

// track records a new process group.
func (g *Guard) track(pgid int) { g.send('+', pgid) }

// untrack forgets a process group whose entry is gone.
func (g *Guard) untrack(pgid int) { g.send('-', pgid) }

// Close ends the guard: it kills the groups still tracked (a clean shutdown has already
// killed its sessions' groups; this reaches their leftovers) and exits; Close waits for
// that, at most guardGrace plus a moment. Idempotent.
func (g *Guard) Close() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	err := g.w.Close()
	g.mu.Unlock()
	if werr := g.wait(); err == nil {
		err = werr
	}
	return err
}

// readGuardLines applies the executor's lines to the set of groups until EOF.
func readGuardLines(r io.Reader, groups map[int]int) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(line[1:])
		if err != nil || pgid <= 0 {
			continue
		}
		switch line[0] {
		case '+':
			groups[pgid]++
		case '-':
			if groups[pgid]--; groups[pgid] <= 0 {
				delete(groups, pgid)
			}
		}
	}
}

// startGuardWith starts exe as the guard.
func startGuardWith(exe string) (*Guard, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting process guard: %w", err)
	}
	defer r.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting process guard: %w", err)
	}
	defer devnull.Close()
	proc, err := os.StartProcess(exe, []string{"executor-process-guard", GuardArg}, &os.ProcAttr{
		Files: []*os.File{r, devnull, devnull},
		Sys:   guardSysProcAttr(),
	})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting process guard: %w", err)
	}
	return &Guard{w: w, wait: func() error { _, err := proc.Wait(); return err }}, nil
}
