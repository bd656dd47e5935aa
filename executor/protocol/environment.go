package protocol

import "encoding/json"

// Shell describes the executor's default shell; Path is a native path, not a URI.
type Shell struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// Capabilities are the feature flags of environment/info (spec/jsonrpc.md §3.8). Only
// implemented features are advertised; absent flags mean false.
type Capabilities struct {
	NetworkProxyLaunch bool `json:"networkProxyLaunch"`
	// NetworkProxyReviewDomains: networkProxy.proxy.reviewDomains is honoured (put to
	// the client with network/policyRequest). Omitted when false.
	NetworkProxyReviewDomains bool `json:"networkProxyReviewDomains,omitempty"`
	// NetworkProxyTransparentTcp: networkProxy.proxy.transparentTcp (and
	// managedNetwork.transparentTcp with it) is honoured in the managed-network sandbox
	// (codex 0.171.0; spec/network-proxy.md §8.3).
	NetworkProxyTransparentTcp bool `json:"networkProxyTransparentTcp,omitempty"`
	// CredentialMasking: networkProxy.proxy.credentialMasking is honoured (built-in
	// providers); CredentialMaskingCustomProviders: proxy.credentialProviders too
	// (spec/network-proxy.md §9). Omitted when false.
	CredentialMasking                bool `json:"credentialMasking,omitempty"`
	CredentialMaskingCustomProviders bool `json:"credentialMaskingCustomProviders,omitempty"`
	CapabilityDiscoverySandbox       bool `json:"capabilityDiscoverySandbox"`
	FsWatchMissing                   bool `json:"fsWatchMissing"`
	CapabilityDiscoveryV2            bool `json:"capabilityDiscoveryV2"`
	EnvironmentConfigRead            bool `json:"environmentConfigRead"`
	HTTPHeaderEnvVars                bool `json:"httpHeaderEnvVars"`
	SandboxedFileStreaming           bool `json:"sandboxedFileStreaming"`
	FileWriteStreaming               bool `json:"fileWriteStreaming"`
	ShellSnapshotV2                  bool `json:"shellSnapshotV2"`
	// LinuxRootWritePreservesDevices: a writable "/" keeps working device nodes (the
	// host /dev without bubblewrap, the fresh bwrap /dev plus the host /dev/shm with it).
	// Omitted when false, as the reference's opt-in serialization does
	// (spec capabilities-0.171.0.md §2, §11).
	LinuxRootWritePreservesDevices bool `json:"linuxRootWritePreservesDevices,omitempty"`
	// LinuxApprovedRootWritePreservesRestrictions: with "/" writable, read-only and deny
	// carve-outs (missing ones included) stay enforced, and one crossing a symlink fails
	// the launch closed. Omitted when false (§2, §11).
	LinuxApprovedRootWritePreservesRestrictions bool `json:"linuxApprovedRootWritePreservesRestrictions,omitempty"`

	// Extensions of this executor (docs/protocol-extensions.md); released executors never
	// send them, so a client reads an absent flag as "not supported". Omitted when false,
	// so an executor without them looks exactly like before.

	// ProcessCloseStdin: process/closeStdin exists.
	ProcessCloseStdin bool `json:"processCloseStdin,omitempty"`
	// ProcessResizePty: process/resizePty exists.
	ProcessResizePty bool `json:"processResizePty,omitempty"`
	// ProcessStartPtySize: process/start honours ptySize.
	ProcessStartPtySize bool `json:"processStartPtySize,omitempty"`
	// ProcessSendSignal: process/sendSignal exists.
	ProcessSendSignal bool `json:"processSendSignal,omitempty"`
	// ProcessExitStatus: process/exitStatus exists (the signal that killed a process).
	ProcessExitStatus bool `json:"processExitStatus,omitempty"`
	// ProcessOutputAck: process/start honours outputAck and process/ack exists
	// (docs/reliability.md).
	ProcessOutputAck bool `json:"processOutputAck,omitempty"`
	// TCPTunnel: tunnel/open and the tunnel/* notifications exist (port tunnels).
	TCPTunnel bool `json:"tcpTunnel,omitempty"`
	// TCPTunnelListen: tunnel/listen, tunnel/unlisten and tunnel/accepted exist (remote
	// listeners; accepted connections use the tunnel/* data notifications).
	TCPTunnelListen bool `json:"tcpTunnelListen,omitempty"`
}

// EnvironmentInfo is the result of environment/info and part of the initialize result.
type EnvironmentInfo struct {
	Shell           Shell  `json:"shell"`
	ExecutorVersion string `json:"executorVersion"`
	// ProviderID is the opaque build identity "sha256:<hex>" (capabilities-0.171.0.md
	// §12.1; executor/provider_id.go); absent for unstamped builds.
	ProviderID  string   `json:"providerId,omitempty"`
	Cwd         *PathURI `json:"cwd"`
	UserHomeDir PathURI  `json:"userHomeDir,omitempty"`
	PlatformOS  string   `json:"platformOs"`
	// PrependPathDirs are executor directories holding helper binaries (e.g. ripgrep)
	// that clients put in front of the PATH they send, in priority order
	// (capabilities-0.171.0.md §12.2); absent when empty, as with the reference.
	PrependPathDirs      []PathURI    `json:"prependPathDirs,omitempty"`
	TemporaryDirectories []PathURI    `json:"temporaryDirectories"`
	TempDir              PathURI      `json:"tempDir"`
	Capabilities         Capabilities `json:"capabilities"`
	// SandboxSupport is the executor's sandbox probe (spec/sandbox.md §3.3), e.g.
	// {"backend":"bubblewrap","userNamespaces":true,"seccomp":true,"landlockAbi":7,
	// "procMount":true,"bubblewrap":{"path":"/usr/bin/bwrap","version":"0.8.0",
	// "features":[…]},"warnings":[]}. An extension the reference does not send (its
	// client ignores it); absent when the executor has no sandbox support configured.
	SandboxSupport json.RawMessage `json:"sandboxSupport,omitempty"`
	// SessionTTLMs is this executor's extension (docs/protocol-extensions.md): how long, in
	// milliseconds, a detached session keeps its processes before they are killed
	// (--session-ttl). Our harness bounds its recovery window by it: past it the session
	// cannot be resumed. Released clients ignore the member; released executors never send
	// it (0: unknown).
	SessionTTLMs uint64 `json:"sessionTtlMs,omitempty"`
}

// EnvironmentStatus is the result of environment/status; Status is always "ready".
type EnvironmentStatus struct {
	Status string `json:"status"`
}
