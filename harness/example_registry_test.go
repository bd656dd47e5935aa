package harness_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/internal/refbin"
)

// exampleEnv is an environment reachable through a registry: what `executor dev` prints.
type exampleEnv struct {
	registry, id, token string
}

// devExecLine is the command `executor dev` prints for reaching its environment.
var devExecLine = regexp.MustCompile(`exec --registry (\S+) --environment-id (\S+) --token-file (\S+) --`)

// startExampleDev runs `executor dev` (the binary TestMain built): a registry, its
// rendezvous and an executor registered with them, in one process. It returns once the
// executor is reachable, and a function that stops the process.
func startExampleDev() (exampleEnv, func()) {
	home, err := os.MkdirTemp("/var/tmp", "harness-example-")
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(oursBin, "dev")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	p, err := refbin.StartProc(cmd, &refbin.LaunchOptions{Line: devExecLine, Kill: true})
	if err != nil {
		log.Fatal(err)
	}
	stop := func() { _ = p.Stop(); os.RemoveAll(home) }
	m, err := p.AwaitLine()
	if err != nil {
		stop()
		log.Fatal(err)
	}
	line, err := os.ReadFile(m[3]) // "TOKEN roles=harness envs=dev"
	if err != nil {
		stop()
		log.Fatal(err)
	}
	env := exampleEnv{registry: m[1], id: m[2], token: strings.Fields(string(line))[0]}
	// The executor registers just after the line: wait until a harness gets through.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		c, err := harness.Dial(ctx, &harness.RemoteOptions{Registry: env.registry, EnvironmentID: env.id, Token: env.token})
		if err == nil {
			c.Close()
			return env, stop
		}
		select {
		case <-ctx.Done():
			stop()
			log.Fatalf("executor dev never became reachable: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Connect to a remote environment through its registry, run a command there and stream
// its events: Dial asks the registry to connect, dials the rendezvous WebSocket it names
// and completes the Noise handshake that pins the executor's key; from then on the Client
// is the same as a local one. Here the registry is `executor dev`'s.
//
// Notifications of one process may arrive out of order (a released executor sends exit
// and close from other tasks than output) or twice after a session recovery;
// ProcessEvents hands each seq over once, in order, so the stream ends at EventClosed.
func ExampleDial_throughRegistry() {
	env, stop := startExampleDev() // `executor dev`, or `executor registry serve` + `executor remote`
	defer stop()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := harness.Dial(ctx, &harness.RemoteOptions{
		Registry:      env.registry,
		EnvironmentID: env.id,
		Token:         env.token, // a harness-role bearer of that registry
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "example-harness", ""); err != nil {
		log.Fatal(err)
	}
	start := protocol.ProcessStartParams{ProcessID: "remote-1", Cwd: protocol.FromNative(os.TempDir()),
		Argv: []string{"/bin/sh", "-c", "echo one; echo two >&2; exit 7"}, Env: map[string]string{"PATH": "/usr/bin:/bin"}}
	if _, err := c.StartProcess(ctx, start); err != nil {
		log.Fatal(err)
	}

	events := harness.NewProcessEvents(start.ProcessID)
	var batch []harness.ProcessEvent
	for n := range c.Notifications() {
		if batch, err = events.Add(batch[:0], n); err != nil {
			log.Fatal(err)
		}
		for _, ev := range batch {
			switch ev.Kind {
			case harness.EventOutput:
				fmt.Printf("%s: %s", ev.Stream, ev.Chunk)
			case harness.EventExited:
				fmt.Println("exited:", ev.ExitCode)
			case harness.EventClosed:
				fmt.Println("closed")
			}
		}
		if events.Done() {
			return
		}
	}
	log.Fatal("connection ended: ", c.Err())
	// Unordered output:
	// stdout: one
	// stderr: two
	// exited: 7
	// closed
}
