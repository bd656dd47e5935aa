// Command executor is the executor agent: a JSON-RPC server, wire-compatible with
// `codex exec-server` (releases 0.171.0 and 0.169.0), that runs processes and file
// operations for remote harnesses; and the tools around it, in one static binary.
//
// Subcommands (`executor help`; `executor <command> -h` for flags):
//
//	serve         the JSON-RPC server on a local WebSocket (default ws://127.0.0.1:0) or stdio
//	              (cmd/executor/internal/serve)
//	remote        register with an environment registry and serve harnesses through its
//	              rendezvous, each over a Noise-encrypted relay stream
//	              (cmd/executor/internal/remote)
//	registry      the self-hosted environment registry + rendezvous: `registry serve`,
//	              `registry token` (cmd/executor/internal/registrycmd)
//	exec          run one command in an executor, through a registry or --url ws://…, and
//	              stream its output (cmd/executor/internal/execcli, on the harness SDK)
//	tunnel        forward local ports (-L) and a SOCKS5 proxy (-D) to the executor's host
//	              through port tunnels (cmd/executor/internal/tunnelcli, on the harness SDK)
//	dev           registry + rendezvous + remote executor in one process; prints an exec
//	              command to try
//	sandbox-info  print the sandbox capability probe (backend, bwrap, seccomp, Landlock) as
//	              JSON
//	bench         the performance scoreboard against the reference
//	              (cmd/executor/internal/bench)
//
// Hidden re-entry points, checked first in main: the sandbox launcher's inner stages
// (spec/sandbox.md §3.2) and the sandboxed fs helper (§4), which re-execute this binary.
//
// Layers: package main is the top of every stack. It parses flags and environment
// defaults, builds the logger and calls one package per subcommand; it holds no protocol
// logic. Exit statuses: 0 on success, on a signal (SIGINT, SIGTERM) and on a stdin EOF that
// ends `remote`; 2 for usage errors (errUsage); 1 for any other error, printed as
// "Error: …"; exec passes on the remote program's status. Debug knobs read from the
// environment are all in knobs.go.
package main
