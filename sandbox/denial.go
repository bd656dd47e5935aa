package sandbox

import "bytes"

// Denial keywords and quick-reject exit codes of the sandboxDenied heuristic
// (spec/sandbox.md §5), in the reference's order, with their log reasons.
var denialKeywords = [...]struct{ keyword, reason string }{
	{"operation not permitted", "operation_not_permitted"},
	{"permission denied", "permission_denied"},
	{"read-only file system", "read_only_file_system"},
	{"seccomp", "seccomp"},
	{"sandbox", "sandbox"},
	{"landlock", "landlock"},
	{"failed to write file", "failed_to_write_file"},
}

// exitSIGSYS is 128 + SIGSYS: a seccomp KILL (spec/sandbox.md §5 step 4).
const exitSIGSYS = 128 + 31

// Denied classifies a finished process for process/exited's sandboxDenied. sandboxed
// is false when sandboxType was "none". The three texts are stdout (+ pty), stderr and
// the aggregated output in sequence order (each ≤ 1 MiB per the caller's retention).
// reason is a bounded log label, "" when not denied. The flag is a UX hint, never an
// authorization signal. Pure and safe for concurrent use.
func Denied(sandboxed bool, exitCode int, stdout, stderr, aggregated []byte) (denied bool, reason string) {
	if !sandboxed || exitCode == 0 {
		return false, ""
	}
	for _, text := range [][]byte{stdout, stderr, aggregated} {
		if r := keywordIn(text); r != "" {
			return true, r
		}
	}
	switch exitCode {
	case 2, 126, 127:
		return false, ""
	case exitSIGSYS:
		return true, "sigsys"
	}
	return false, ""
}

func keywordIn(text []byte) string {
	if len(text) == 0 {
		return ""
	}
	lower := bytes.ToLower(text)
	for _, k := range denialKeywords {
		if bytes.Contains(lower, []byte(k.keyword)) {
			return k.reason
		}
	}
	return ""
}
