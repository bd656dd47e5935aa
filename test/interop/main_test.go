// Package interop_test runs this repository's relay and Noise code against the released
// reference binaries (`codex exec-server`, npm @openai/codex), the acceptance bar for wire
// behaviour (../shared/STYLE.md principle 17). Every test runs against each supported release
// (refbin.Versions: 0.171.0 and 0.169.0), in a subtest named by the version.
//
// Reference lookup: internal/refbin ($EXECUTOR_REFERENCE_BINS, else
// scripts/install-reference.sh per release). When CI=true a missing release fails the tests;
// elsewhere its subtests skip with the reason.
//
// Fixture (fixture_test.go): an in-test registry on http://127.0.0.1 (register, validate) and an
// in-test rendezvous websocket on ws://127.0.0.1; the test itself plays rendezvous and harness
// on the executor's socket. The reference is started as
//
//	codex exec-server --remote http://127.0.0.1:PORT --environment-id env-interop --registration-bearer-stdin
//
// with the bearer as one line on stdin and CODEX_HOME (and HOME) a fresh dir under /var/tmp.
// Observed from codex 0.169.0 and 0.171.0: a plain http:// loopback registry URL is accepted with
// bearer-stdin auth (no https needed), and a ws:// rendezvous url from the register response is
// dialed verbatim with its query, without an authorization header.
//
// Regenerate relay/frame's golden frames with relay/frame/testdata/reference/regen.sh.
package interop_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/execlab/executor/internal/refbin"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { refbin.RemoveExecutor(); os.Exit(code) }))
}
