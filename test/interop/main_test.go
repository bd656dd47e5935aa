// Package interop_test runs this repository's relay and Noise code against the released
// reference binary (`codex exec-server` 0.169.0, npm @openai/codex), the acceptance bar for wire
// behaviour (STYLE.md principle 17).
//
// Reference lookup: $EXECUTOR_REFERENCE_BIN, else scripts/install-reference.sh (prints the
// path), else ../shared/tools/reference-codex relative to the repository root (prints the path).
// When CI=true and none works the tests fail; elsewhere they skip with the reason.
//
// Fixture (fixture_test.go): an in-test registry on http://127.0.0.1 (register, validate) and an
// in-test rendezvous websocket on ws://127.0.0.1; the test itself plays rendezvous and harness
// on the executor's socket. The reference is started as
//
//	codex exec-server --remote http://127.0.0.1:PORT --environment-id env-interop --registration-bearer-stdin
//
// with the bearer as one line on stdin and CODEX_HOME (and HOME) a fresh dir under /var/tmp.
// Observed from codex 0.169.0: a plain http:// loopback registry URL is accepted with
// bearer-stdin auth (no https needed), and a ws:// rendezvous url from the register response is
// dialed verbatim with its query, without an authorization header.
//
// Regenerate relay/frame's golden frames with relay/frame/testdata/reference/regen.sh.
package interop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// repoRoot is the directory holding go.mod.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

var (
	refOnce  sync.Once
	refPath  string
	refTried []string
)

// referenceBinary returns the reference binary's path, or fails (CI=true) / skips the test.
func referenceBinary(tb testing.TB) string {
	tb.Helper()
	refOnce.Do(func() {
		if p := os.Getenv("EXECUTOR_REFERENCE_BIN"); p != "" {
			if isExecutable(p) {
				refPath = p
				return
			}
			refTried = append(refTried, "EXECUTOR_REFERENCE_BIN="+p+": not an executable file")
		}
		for _, script := range []string{
			filepath.Join(repoRoot(), "scripts", "install-reference.sh"),
			filepath.Join(repoRoot(), "..", "shared", "tools", "reference-codex"),
		} {
			out, err := exec.Command(script).Output()
			p := strings.TrimSpace(string(out))
			if err == nil && isExecutable(p) {
				refPath = p
				return
			}
			refTried = append(refTried, script+": "+errText(err, p))
		}
	})
	if refPath == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("reference binary not found under CI=true; tried: %s", strings.Join(refTried, "; "))
		}
		tb.Skipf("reference binary not found (set EXECUTOR_REFERENCE_BIN); tried: %s", strings.Join(refTried, "; "))
	}
	return refPath
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func errText(err error, out string) string {
	if err != nil {
		return err.Error()
	}
	return "printed " + `"` + out + `"` + ", not an executable file"
}

// codexHome makes a fresh CODEX_HOME under /var/tmp: the reference refuses to set up its
// sandbox helper aliases under /tmp or $TMPDIR.
func codexHome(tb testing.TB) string {
	tb.Helper()
	if err := os.MkdirAll("/var/tmp/executor-tests", 0o755); err != nil {
		tb.Fatal(err)
	}
	d, err := os.MkdirTemp("/var/tmp/executor-tests", "interop-codex-home-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(d) })
	return d
}
