package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"
)

// Executor credential frames (`--executor-credential-stdin`, spec/registry-auth.md §11.1 row
// 1b). Protocol flow, as observed from codex 0.169.0:
//
//	parent ──stdin──▶ executor
//	  {"version":1,"environment_id":"env-1","token":"<bearer>","expires_at":1795994798}\n
//	  … later frames replace the bearer used by the next registry call (register, validate) …
//	  EOF ──▶ the executor stops (exit 0), or fails with "pipe closed" before it has started
//
// One frame is one line: a JSON object terminated by "\n" (JSON whitespace, "\r" included,
// may surround it), at most MaxCredentialFrameLine bytes counting the "\n". A final line
// without "\n" at EOF is invalid even when it parses. The object has exactly four members,
// each required, in any order; unknown or duplicate members make the frame invalid:
//
//	version         integer, must be 1
//	environment_id  string, must equal the (trimmed) --environment-id, no trimming
//	token           string, 1+ bytes of visible ASCII (0x21–0x7E); sent as `Bearer <token>`
//	expires_at      integer Unix seconds (u64); expired when now >= expires_at
//
// The reference also accepts the positional array [version, environment_id, token,
// expires_at] (serde's sequence form of the same struct); so does DecodeCredentialFrame.
//
// Check order (observed): decoding and the token rule (invalid frame), then the environment,
// then expiry. Any rejected frame is fatal for the process (exit 1).

// Credential frame errors. Their texts are the reference's; none carries frame content.
var (
	// ErrInvalidCredentialFrame: the line is not a well-formed frame.
	ErrInvalidCredentialFrame = errors.New("invalid exec-server executor credential frame")
	// ErrCredentialFrameTooLarge: no "\n" within MaxCredentialFrameLine bytes.
	ErrCredentialFrameTooLarge = errors.New("exec-server executor credential frame exceeds the size limit")
	// ErrCredentialWrongEnvironment: environment_id differs from --environment-id.
	ErrCredentialWrongEnvironment = errors.New("exec-server executor credential is for a different environment")
	// ErrCredentialExpired: expires_at is not in the future (at receipt or at a later use).
	ErrCredentialExpired = errors.New("exec-server executor credential is expired")
	// ErrCredentialUnavailable: a registry call came before the first frame.
	ErrCredentialUnavailable = errors.New("exec-server executor credential is unavailable")
	// ErrCredentialPipeClosed: stdin reached EOF (before the executor started, or before a
	// registry call needed the credential).
	ErrCredentialPipeClosed = errors.New("exec-server executor credential pipe closed")
	// ErrCredentialRead: reading stdin failed.
	ErrCredentialRead = errors.New("could not read exec-server executor credential pipe")
	// ErrCredentialInitialTimeout: no frame, EOF or error within InitialCredentialTimeout.
	ErrCredentialInitialTimeout = errors.New("timed out waiting for the initial exec-server executor credential")
)

// CredentialFrame is one decoded executor credential frame. The token is unexported so that
// %v and %+v cannot print it; String and LogValue redact it.
type CredentialFrame struct {
	Version       int
	EnvironmentID string
	ExpiresAt     uint64 // Unix seconds
	token         string
}

// Token returns the bearer the frame carries.
func (f CredentialFrame) Token() string { return f.token }

func (f CredentialFrame) String() string {
	return "CredentialFrame{version:" + strconv.Itoa(f.Version) + ", environment_id:" + strconv.Quote(f.EnvironmentID) +
		", expires_at:" + strconv.FormatUint(f.ExpiresAt, 10) + ", token:<redacted>}"
}
func (f CredentialFrame) GoString() string     { return f.String() }
func (f CredentialFrame) LogValue() slog.Value { return slog.StringValue(f.String()) }

// Expired reports whether the frame is expired at now (now >= expires_at, whole seconds).
func (f CredentialFrame) Expired(now time.Time) bool {
	s := now.Unix()
	return s >= 0 && uint64(s) >= f.ExpiresAt
}

// Check applies the post-decoding rules in the reference's order: the environment, then
// expiry. envID is the trimmed --environment-id.
func (f CredentialFrame) Check(envID string, now time.Time) error {
	if f.EnvironmentID != envID {
		return ErrCredentialWrongEnvironment
	}
	if f.Expired(now) {
		return ErrCredentialExpired
	}
	return nil
}

// credential frame members, in the order of the positional (array) form.
const (
	memberVersion = 1 << iota
	memberEnvironmentID
	memberToken
	memberExpiresAt
	memberAll = memberVersion | memberEnvironmentID | memberToken | memberExpiresAt
)

// DecodeCredentialFrame decodes one frame line (without its "\n"; surrounding JSON whitespace
// is allowed). Every failure is ErrInvalidCredentialFrame; the line's content never appears
// in an error. It does not check the environment or expiry (see Check).
func DecodeCredentialFrame(line []byte) (CredentialFrame, error) {
	var f CredentialFrame
	if !utf8.Valid(line) || hasLoneSurrogate(line) || !json.Valid(line) {
		return f, ErrInvalidCredentialFrame
	}
	v := bytes.TrimLeft(line, " \t\r\n")
	var vals [4]json.RawMessage
	switch v[0] {
	case '{':
		if !decodeFrameObject(v, &vals) {
			return f, ErrInvalidCredentialFrame
		}
	case '[':
		var arr []json.RawMessage
		if json.Unmarshal(v, &arr) != nil || len(arr) != len(vals) {
			return f, ErrInvalidCredentialFrame
		}
		copy(vals[:], arr)
	default:
		return f, ErrInvalidCredentialFrame
	}
	if string(vals[0]) != "1" { // the only JSON integer spelling of 1
		return f, ErrInvalidCredentialFrame
	}
	f.Version = 1
	exp, ok := parseUnsigned(vals[3])
	if !ok || !decodeJSONString(vals[1], &f.EnvironmentID) || !decodeJSONString(vals[2], &f.token) || !validToken(f.token) {
		return CredentialFrame{}, ErrInvalidCredentialFrame
	}
	f.ExpiresAt = exp
	return f, nil
}

// decodeFrameObject fills vals from a frame object, rejecting unknown and duplicate members.
// v is valid JSON starting with '{'.
func decodeFrameObject(v []byte, vals *[4]json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(v))
	if _, err := dec.Token(); err != nil { // '{'
		return false
	}
	seen := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := k.(string)
		var bit, i int
		switch key {
		case "version":
			bit, i = memberVersion, 0
		case "environment_id":
			bit, i = memberEnvironmentID, 1
		case "token":
			bit, i = memberToken, 2
		case "expires_at":
			bit, i = memberExpiresAt, 3
		default:
			return false
		}
		if seen&bit != 0 || dec.Decode(&vals[i]) != nil {
			return false
		}
		seen |= bit
	}
	return seen == memberAll
}

// parseUnsigned accepts a JSON integer literal in [0, 2^64-1]: digits only, so fractions,
// exponents and every negative number (-0 included, as the reference) are rejected.
func parseUnsigned(raw json.RawMessage) (uint64, bool) {
	if len(raw) == 0 || raw[0] < '0' || raw[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	return n, err == nil
}

func decodeJSONString(raw json.RawMessage, dst *string) bool {
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, dst) == nil
}

// validToken: at least one byte, all visible ASCII (observed: spaces, tabs, control and
// non-ASCII characters are rejected; every printable punctuation mark is accepted).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// hasLoneSurrogate reports a \uD800–\uDFFF escape that is not a high+low pair. serde_json
// rejects those; encoding/json would silently turn them into U+FFFD. b is scanned as JSON
// text: backslashes only occur inside strings, so escapes are found sequentially.
func hasLoneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			continue
		}
		if b[i+1] != 'u' {
			i++ // skip the escaped character (it may be a backslash)
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok {
			return false // malformed; json.Valid reports it
		}
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			if i+11 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return true
			}
			lo, ok := hex4(b, i+8)
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(n), err == nil
}
