package sandbox_test

import (
	"testing"

	"github.com/execlab/executor/sandbox"
)

// Ports of the reference's heuristic tests and observations (spec/sandbox.md §5).
func TestDenied(t *testing.T) {
	tests := []struct {
		name                 string
		sandboxed            bool
		code                 int
		stdout, stderr, aggr string
		want                 bool
		reason               string
	}{
		{"requires_keywords", true, 1, "", "", "", false, ""},
		{"identifies_keyword_in_stderr", true, 1, "", "sh: /x: Permission denied", "", true, "permission_denied"},
		{"read-only exit 2", true, 2, "", "touch: Read-only file system", "", true, "read_only_file_system"},
		{"respects_quick_reject_exit_codes 127", true, 127, "", "sh: foo: not found", "", false, ""},
		{"127 with keyword", true, 127, "", "Permission denied", "", true, "permission_denied"},
		{"respects_quick_reject_exit_codes 126", true, 126, "", "", "", false, ""},
		{"ignores_non_sandbox_mode", false, 1, "", "Operation not permitted", "", false, ""},
		{"uses_aggregated_output", true, 3, "", "", "LANDLOCK says no", true, "landlock"},
		{"ignores_network_policy_text_with_zero_exit_code", true, 0, "seccomp sandbox", "", "", false, ""},
		{"flags_sigsys_exit_code", true, 159, "", "", "", true, "sigsys"},
		{"sigkill", true, 137, "", "", "", false, ""},
		{"stdout keyword", true, 5, "failed to write file", "", "", true, "failed_to_write_file"},
		{"sandbox keyword", true, 4, "", "codex-linux-sandbox: boom", "", true, "sandbox"},
	}
	for _, tt := range tests {
		got, reason := sandbox.Denied(tt.sandboxed, tt.code, []byte(tt.stdout), []byte(tt.stderr), []byte(tt.aggr))
		if got != tt.want || reason != tt.reason {
			t.Errorf("%s: got (%v, %q), want (%v, %q)", tt.name, got, reason, tt.want, tt.reason)
		}
	}
}
