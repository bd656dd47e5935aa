package process

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/execlab/executor/internal/reexec"
)

// GuardArg is argv[1] of the process guard: the running binary re-entered as a helper.
// Hidden: not a command users run.
const GuardArg = "__executor-process-guard"

// init registers the guard as a re-entry point (internal/reexec): a binary started as
// exactly [argv0, GuardArg] runs the guard on its stdin. Registering runs nothing; the
// binary's main (or TestMain) dispatches, and StartGuard refuses to start a guard from a
// binary that does not (reexec.Dispatched), which would run its whole program (or test
// suite) again as the "guard".
func init() {
	reexec.Register(reexec.Point{Args: []string{GuardArg}, Exact: true,
		Run: func([]string) int { return runGuard(os.Stdin) }})
}

// guardGrace is how long the guard waits between SIGTERM and SIGKILL to the groups it
// kills when the executor died: the leaders also got SIGTERM from Pdeathsig (as with the
// reference), and one second lets them clean up before the group is killed.
const guardGrace = time.Second

// guardPoll is how often the guard checks, during guardGrace, whether the processes it
// sent SIGTERM are gone (then it skips the rest of the grace and the SIGKILL).
const guardPoll = 20 * time.Millisecond

// guardNoticeTimeout bounds the guard's exit notice POST, connection included: a
// harness learns of the exit within its next recovery attempt or not at all (then it
// retries for its window, as without a notice), so waiting longer buys nothing.
const guardNoticeTimeout = 3 * time.Second

// maxGuardLine bounds one line of the guard protocol, in bytes: an exit notice line
// carries a URL (a registry base and a path) and a small JSON body in base64.
const maxGuardLine = 16 << 10

// Guard is the helper process that makes every process group the executor started die with
// it, even after `kill -9` of the executor (which runs no code of ours). Pdeathsig reaches
// only each group's leader; the guard reaches the rest.
//
// Protocol: the executor holds the write end of a pipe whose read end is the guard's stdin,
// and writes one line per change: "+PGID" when a group starts, "-PGID" when its process
// entry is gone, and "N<url> <base64 body>" to set the exit notice (SetExitNotice; the
// last one wins). The guard ignores SIGINT/SIGTERM/SIGHUP and leads its own session, so
// only the pipe's EOF — the executor's exit, clean or not (the kernel closes the write
// end) — ends it. It then sends SIGTERM to every group it holds and to every process
// whose process group or session is one of them, waits up to guardGrace for them to be
// gone, sends SIGKILL the same way to what is left, posts the exit notice if one was set
// (at most guardNoticeTimeout), and exits.
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
	g.writeLine(fmt.Sprintf("%c%d\n", op, pgid))
}

// writeLine sends one line to the guard; once the guard is closed nothing more is sent.
func (g *Guard) writeLine(line string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	_, _ = io.WriteString(g.w, line)
}

// track records a new process group.
func (g *Guard) track(pgid int) { g.send('+', pgid) }

// untrack forgets a process group whose entry is gone.
func (g *Guard) untrack(pgid int) { g.send('-', pgid) }

// SetExitNotice makes the guard POST body (JSON) to url once the executor has exited and
// its groups are killed: our registry's exit notice (docs/reliability.md §5), after which
// harnesses stop waiting for a session that cannot come back. A later call replaces the
// notice (each registration has its own). url must be http(s) without spaces; both are
// credentials the guard never logs (it has no log). No-op on a nil Guard.
func (g *Guard) SetExitNotice(url string, body []byte) {
	if g == nil || url == "" || strings.ContainsAny(url, " \n\r") {
		return
	}
	line := "N" + url + " " + base64.StdEncoding.EncodeToString(body) + "\n"
	if len(line) > maxGuardLine {
		return
	}
	g.writeLine(line)
}

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

// exitNotice is the POST the guard makes after the executor's exit (SetExitNotice).
type exitNotice struct {
	url  string
	body []byte
}

// readGuardLines applies the executor's lines to the set of groups until EOF, and returns
// the last exit notice set (nil if none). Malformed lines are skipped.
func readGuardLines(r io.Reader, groups map[int]int) *exitNotice {
	var notice *exitNotice
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxGuardLine)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		if line[0] == 'N' {
			if n, ok := parseNoticeLine(line[1:]); ok {
				notice = n
			}
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
	return notice
}

// parseNoticeLine decodes "<url> <base64 body>"; the URL must be http(s).
func parseNoticeLine(s string) (*exitNotice, bool) {
	u, b64, ok := strings.Cut(s, " ")
	if !ok || !(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
		return nil, false
	}
	body, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, false
	}
	return &exitNotice{url: u, body: body}, true
}

// post sends the notice once, bounded by guardNoticeTimeout; redirects are not followed
// (the body is a credential). The outcome is not reported: the guard has no one to tell,
// and a harness without the notice just keeps retrying, as it would without this registry.
func (n *exitNotice) post() {
	ctx, cancel := context.WithTimeout(context.Background(), guardNoticeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, bytes.NewReader(n.body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
}

// errNoDispatch: the running binary does not dispatch re-entry points.
var errNoDispatch = errors.New("starting process guard: this binary does not dispatch re-entry points (reexec.Main/TestMain)")

// startGuardWith starts exe as the guard.
func startGuardWith(exe string) (*Guard, error) {
	if !reexec.Dispatched() {
		return nil, errNoDispatch
	}
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
