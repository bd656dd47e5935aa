package executor

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/execlab/executor/executor/netproxy/credmask"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/session"
	"github.com/execlab/executor/sandbox"
)

// ExecutorVersion is the executorVersion reported in environment/info: the release of
// the reference whose protocol this executor implements (spec/jsonrpc.md §3.8; the
// newest release, shared/spec/changes-0.171.0.md, with 0.169.0 clients kept working).
const ExecutorVersion = "0.171.0"

func handleEnvironmentInfo(_ context.Context, c *conn) (any, error) { return c.srv.info, nil }

func handleEnvironmentStatus(context.Context, *conn) (any, error) {
	return &protocol.EnvironmentStatus{Status: "ready"}, nil
}

// withSessionTTL sets info's sessionTtlMs extension to the detached-session TTL the server
// enforces (ttl, or session.DefaultTTL when it is not positive) and returns info.
func withSessionTTL(info *protocol.EnvironmentInfo, ttl time.Duration) *protocol.EnvironmentInfo {
	if ttl <= 0 {
		ttl = session.DefaultTTL
	}
	info.SessionTTLMs = uint64(ttl / time.Millisecond)
	return info
}

// withPrependPathDirs sets info's prependPathDirs to dirs (as file URIs) and returns info.
func withPrependPathDirs(info *protocol.EnvironmentInfo, dirs []string) *protocol.EnvironmentInfo {
	for _, d := range dirs {
		info.PrependPathDirs = append(info.PrependPathDirs, protocol.FromNative(d))
	}
	return info
}

// detectEnvironment inspects the host once (spec/jsonrpc.md §3.8). l, if non-nil,
// supplies sandboxSupport (spec/sandbox.md §3.3) and the sandbox-dependent capabilities;
// codexHome ("" for none) decides the credential-masking ones.
func detectEnvironment(l *sandbox.Launcher, codexHome string) *protocol.EnvironmentInfo {
	info := &protocol.EnvironmentInfo{
		Shell:                detectShell(),
		ExecutorVersion:      ExecutorVersion,
		ProviderID:           providerID(),
		PlatformOS:           platformOS(),
		TemporaryDirectories: []protocol.PathURI{},
		Capabilities:         capabilities(l, codexHome),
	}
	if l != nil {
		r := l.Report()
		if b, err := json.Marshal(&r); err == nil {
			info.SandboxSupport = b
		}
	}
	cwd, err := os.Getwd()
	if err == nil {
		u := protocol.FromNative(cwd)
		info.Cwd = &u
	}
	if home := homeDir(); home != "" {
		info.UserHomeDir = protocol.FromNative(home)
	}
	tmpdir, set := os.LookupEnv("TMPDIR")
	switch {
	case set && tmpdir != "":
		p := tmpdir
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		if len(p) > 1 {
			p = strings.TrimSuffix(p, "/")
		}
		info.TemporaryDirectories = []protocol.PathURI{protocol.FromNative(p)}
		info.TempDir = protocol.FromNative(p)
	case set: // empty TMPDIR: the OS temp dir resolves to the current directory
		info.TempDir = protocol.FromNative(cwd)
	default:
		info.TempDir = protocol.FromNative("/tmp")
	}
	return info
}

func platformOS() string {
	if runtime.GOOS == "darwin" {
		return "macos"
	}
	return runtime.GOOS
}

// recognisedShells maps a login shell's base name to the reported name.
var recognisedShells = map[string]string{
	"bash": "bash", "zsh": "zsh", "sh": "sh", "pwsh": "powershell", "powershell": "powershell",
}

// detectShell reports the login shell of the user's passwd entry when it exists and is
// recognised, else the first bash on PATH, else /bin/bash. $SHELL is not consulted.
func detectShell() protocol.Shell {
	if ent, ok := passwdEntry(os.Getuid()); ok {
		if name, ok := recognisedShells[filepath.Base(ent.shell)]; ok {
			if st, err := os.Stat(ent.shell); err == nil && !st.IsDir() {
				return protocol.Shell{Name: name, Path: ent.shell}
			}
		}
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return protocol.Shell{Name: "bash", Path: p}
	}
	return protocol.Shell{Name: "bash", Path: "/bin/bash"}
}

func homeDir() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	if ent, ok := passwdEntry(os.Getuid()); ok {
		return ent.home
	}
	return ""
}

type passwd struct{ home, shell string }

// passwdEntry reads /etc/passwd directly (no cgo, no NSS).
func passwdEntry(uid int) (passwd, bool) {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return passwd{}, false
	}
	defer f.Close()
	want := strconv.Itoa(uid)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 7 && fields[2] == want {
			return passwd{home: fields[5], shell: fields[6]}, true
		}
	}
	return passwd{}, false
}

// capabilities advertises only what this executor implements (spec/jsonrpc.md §3.8,
// spec/capabilities-0.171.0.md §2): a flag is true only when its whole behaviour is
// proven against the released binary. Flags that depend on a sandbox backend are set
// only when one exists (networkProxyTransparentTcp: bubblewrap); credentialMasking* only
// with a CODEX_HOME where the CA can be created. The process extensions (docs/protocol-extensions.md) are
// always advertised: only this executor sends them, and released clients ignore flags
// they do not know (the conformance runner removes capabilities before comparing).
func capabilities(l *sandbox.Launcher, codexHome string) protocol.Capabilities {
	c := protocol.Capabilities{
		HTTPHeaderEnvVars:   true,
		ProcessCloseStdin:   true,
		ProcessResizePty:    true,
		ProcessStartPtySize: true,
		ProcessSendSignal:   true,
		ProcessExitStatus:   true,
		ProcessOutputAck:    true,
	}
	// One line per flag, each with the package that implements it.
	c.FileWriteStreaming = true    // fs/open mode "replace" + fs/writeBlock (executor/fs)
	c.FsWatchMissing = true        // fs/watchMissing + fs/missingChanged (executor/fs)
	c.EnvironmentConfigRead = true // environmentConfig/read (executor/envconfig)
	c.ShellSnapshotV2 = true       // process/start.shellSnapshot (executor/shellsnap)
	// networkProxy (executor/netproxy, executor/process): callbacks and the sandbox
	// bridge proven by the netproxy_* scenarios (transparent TCP below, with bubblewrap).
	c.NetworkProxyLaunch = true        // process/start.networkProxy
	c.NetworkProxyReviewDomains = true // reviewDomains → network/policyRequest
	// Credential masking (credmask_* scenarios) needs the CA under CODEX_HOME/proxy:
	// advertised only where it can be created (Options.CodexHome, credmask.CAPossible).
	masking := credmask.CAPossible(codexHome) == nil
	c.CredentialMasking = masking                // proxy.credentialMasking (executor/netproxy/credmask, netproxy interception)
	c.CredentialMaskingCustomProviders = masking // proxy.credentialProviders (credmask.Providers, credmask/scan.go)
	if l != nil && l.Report().Backend != sandbox.BackendNone {
		// A sandboxed fs/open is served from a snapshot the fs helper reads, and
		// capabilityRoots/discoverV1 scans a sandboxed root in that helper
		// (executor/capdiscover); without a backend both fail closed.
		c.SandboxedFileStreaming = true
		c.CapabilityDiscoverySandbox = true
		c.CapabilityDiscoveryV2 = true // capabilities/discoverV2 sandboxes like discoverV1
	}
	// The root-write flags describe the bubblewrap backend (proven against 0.171.0 and
	// 0.169.0 by the sandbox_root_write_* scenarios); the degraded Landlock backend
	// refuses root writes with carve-outs instead.
	if l != nil && l.Report().Backend == sandbox.BackendBubblewrap {
		c.LinuxRootWritePreservesDevices = true
		c.LinuxApprovedRootWritePreservesRestrictions = true
		// proxy.transparentTcp: the bubblewrap sandbox's tun capture into the proxy's
		// SOCKS5 policy (sandbox/transparent; netproxy_transparent_tcp_capture scenario).
		// Without bubblewrap such a launch fails closed, as every managed network does.
		c.NetworkProxyTransparentTcp = true
	}
	return c
}
