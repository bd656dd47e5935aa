// Package sandbox enforces a resolved sandbox policy (package sandbox/policy) on Linux,
// as spec/sandbox.md §3 describes: a launcher stage re-entered through /proc/self/exe
// that either execs the command directly (with no_new_privs and a seccomp filter when
// the network is restricted), runs it under bubblewrap (mount view, user/pid/ipc/net
// namespaces, --cap-drop ALL, an inner stage that verifies zero capabilities, sets
// no_new_privs, installs seccomp on its spawn thread and reaps as pid 1), or, as a
// degraded fallback, under Landlock + seccomp + a capability drop.
//
// Fast paths (same confinement, fewer process starts): a bubblewrap plan that needs no
// supervision (no host mount targets, no --ro-bind-data descriptors, no managed
// network) is returned by Wrap as bwrap itself, the launcher stage's argv computed in
// the caller; and the inner stage runs an in-process re-entry point
// (reexec.Point.InProcess: the fs helper) itself after confining every thread
// (TSYNC), instead of starting this binary once more.
//
// Layers: executor/process and executor/fs call Launcher.Wrap and spawn the returned
// Command; the stages are a point of the re-entry registry (internal/reexec), which
// cmd/executor's main dispatches first. This package imports no other project package
// except sandbox/policy and the leaves jsonwire (for the wire error codes) and
// internal/reexec, and knows nothing of JSON-RPC messages: errors that reach the wire are
// *policy.Error values carrying their code.
//
// Integration contract:
//   - main: `reexec.Main()` before anything else (this package's init registers the
//     stages; in-process commands are reexec points with InProcess set).
//   - startup: `r := sandbox.Probe(ctx, &sandbox.ProbeOptions{Backend: flag})`; log
//     r.LogLine(); serve r as sandboxSupport / `sandbox-info`; `l := sandbox.NewLauncher(r, nil)`.
//   - per request: policy.Resolve(ctx, opts) then l.Wrap(&sandbox.Request{…}); a nil
//     Command means "spawn directly, sandboxType none".
//   - on exit: sandbox.Denied(…) computes sandboxDenied.
//
// Environment (env.go; hardening beyond the reference, which starts its launcher and
// bwrap with the command's environment): nothing that runs before the sandbox is in
// place — the launcher stage, bwrap, the inner stage before its confinement — runs with
// the command's environment. Wrap's Command.Env is a fixed one (a marker, the command's
// HOME for bwrap, and every command entry under the prefix "codex-sandbox-env:", a name
// no loader, libc or runtime reads); the stage that starts the command decodes it, so
// the command sees exactly what the request asked for, plus bwrap's PWD as before. A
// stage started with the marker refuses to launch (exit 1) when its own environment
// still holds a variable the loader or libc honours (LD_*, MALLOC_*, GCONV_PATH, …).
//
// Managed (proxy-only) network (spec/sandbox.md §3.10; managed.go, proxyurl.go,
// proxybridge.go, managed_linux.go): bubblewrap only. The launcher stage always
// supervises bwrap, routes each loopback proxy variable through one Unix socket per
// proxy port in a private 0700 directory under $TMPDIR (bound read-only into the
// sandbox), and removes the directory when bwrap exits; the inner stage listens on
// 127.0.0.1:0 per socket inside the new network namespace, rewrites the variables, and
// starts the command under the ProxyRouted filter. Fail-closed rows exit 101.
//
// Read-only carve-outs below a writable root are bound by descriptor (--ro-bind-fd,
// opened by a symlink-refusing walk from the root) when bwrap supports it, else by
// path (bwrap without --ro-bind-fd: the /proc/self/fd + --verify-fd-mount fallback of
// §3.6 is not implemented); so are the directories self-bound between the root and a
// carve-out (--bind-fd).
//
// Writable roots (nested_linux.go; issue 26, deviation from the reference, which
// resolves every root with realpath): each root is resolved by our own walk from "/".
// A symlink in a directory outside every other writable root is the user's and is
// followed; a symlink in a directory at or below another writable root (sandboxed
// code could have planted it) refuses the launch, "cannot enforce sandbox writable
// root W because it crosses writable symlink S" (bwrap launcher exit 1, like the
// carve-out refusal of §2.10; Landlock likewise); a root reached through such a
// directory is bound by the walk's descriptor (--bind-fd; bubblewrap checks that the
// mount is the descriptor's inode), its carve-outs are opened from that descriptor,
// and the directories between it and the enclosing root are self-bound, so a command
// running with the same policy cannot rename them (EBUSY). Host mount targets are
// created and removed relative to a parent directory opened without following
// symlinks. fullWrite plans resolve as before. Not covered: a command running
// concurrently under a *different* policy that has only the enclosing root writable
// can still swap directories while a launch is being set up; the launch then fails
// closed or binds the walked inode, but bwrap resolves mount destinations by path, so
// a mount may land elsewhere inside the new sandbox (a carve-out of the nested root
// may then miss its place); trust is decided per launch from this policy's roots.
//
// Root writes (spec capabilities-0.171.0.md §11; launchEntries, bindDevShm and
// isMetadataName in mounts_linux.go; issue 28), as codex 0.171.0 and 0.169.0 behave: a
// policy with "/" writable and nothing narrowing it runs without bubblewrap and sees the
// host /dev; one with carve-outs runs under bubblewrap with the fresh --dev /dev plus the
// host /dev/shm bound writable (linuxRootWritePreservesDevices). Carve-outs survive the
// root write (linuxApprovedRootWritePreservesRestrictions): missing_path_behavior "skip"
// drops only a missing write entry, so a missing read or deny carve-out below a writable
// root is masked and cannot be created (an empty read-only directory when its name is a
// protected metadata name and its parent exists, else an empty file at its first missing
// component), "/" gets the protected-name masks of any writable root, and a carve-out
// crossing a symlink refuses the launch with the §2.10 text. Every other rule here
// (self-bound ancestors, descriptor binds, depth order) applies to "/" like to any root.
//
// Limits and deviations: the protected-create monitor is not implemented (masks are used instead, which the spec
// allows). bwrap is searched on the executor's PATH only, never the request's.
// Deviation from the reference, as the spec asks: directories between a writable root
// and a carve-out below it are self-bound (mount points, so renaming them fails EBUSY).
// bwrap mounts are ordered by destination depth (mounts_linux.go), so nothing hidden or
// read-only is covered by a later bind and every --remount-ro finds its own tmpfs; the
// app-server socket directory /tmp/codex-daemon-<euid> is created if missing and masked
// after the baseline and again after every bind that shows it (a writable or readable
// /tmp), as the reference does, and nothing is mounted inside it. The reference's argv
// for the codex CLI's profiles, and where ours differs, is in mounts_order_linux_test.go.
// Managed network: the bridge reaches the
// sandbox through a bound socket directory instead of inherited descriptors (the
// reference's control_fd), so the command can see (not write) that directory;
// `sandbox: null` + enforceManagedNetwork is a disabled profile under managed network
// (the reference runs it unconfined); a launcher killed by SIGKILL leaves its socket
// directory behind until the next managed launch sweeps it; proxy values are parsed by
// a WHATWG subset (no IDNA), so an exotic host spelling is left unrouted where the
// reference might route it (fails closed).
//
// Concurrency: Launcher and Report are immutable values, safe for concurrent use.
// Stage code runs in its own short-lived process; every goroutine it starts (signal
// forwarders, the confined spawn goroutine, proxy bridge accept and copy loops owned by
// a bridge that the stage closes before exiting) exits before the stage does or dies
// with it. Confined threads are never unlocked, so the runtime discards them.
package sandbox
