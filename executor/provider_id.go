package executor

// EnvironmentInfo.providerId (capabilities-0.171.0.md §12.1): an opaque build identity
// that clients use to look up behavioural verification of an executor build. The
// reference derives it from its compiled commit and target; its preimage is not
// published, so ours is our own and never equals a reference value:
//
//	"sha256:" + hex(sha256(<main module version> NUL <vcs.revision>[+dirty] NUL <GOOS>/<GOARCH>))
//
// from the binary's embedded build information. Like the reference's it is absent for
// unstamped builds: no build information, or neither a released module version nor a
// VCS revision (a `go build -buildvcs=false` from a checkout, a `go test` binary), where
// every build of every commit would otherwise share one identity. It is not a checksum
// of the binary and not a security attestation.

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime"
	"runtime/debug"
)

// providerID returns this binary's providerId, or "" when the build is unstamped.
func providerID() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return providerIDFrom(bi, runtime.GOOS, runtime.GOARCH)
}

// providerIDFrom is providerID over given build information and target.
func providerIDFrom(bi *debug.BuildInfo, goos, goarch string) string {
	if bi == nil {
		return ""
	}
	version := bi.Main.Version
	if version == "(devel)" {
		version = ""
	}
	var revision string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if version == "" && revision == "" {
		return ""
	}
	if dirty && revision != "" {
		revision += "+dirty"
	}
	sum := sha256.Sum256([]byte(version + "\x00" + revision + "\x00" + goos + "/" + goarch))
	return "sha256:" + hex.EncodeToString(sum[:])
}
