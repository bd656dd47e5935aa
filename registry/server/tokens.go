package server

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Role is what a token may do.
type Role string

const (
	RoleExecutor Role = "executor" // register and validate
	RoleHarness  Role = "harness"  // connect
)

// tokenEntry is one line of the token file.
type tokenEntry struct {
	roles map[Role]bool   // nil: every role
	envs  map[string]bool // nil: every environment
	id    string          // TokenID of the token
	line  int             // line number in the file, for warnings
	// implicit is true when roles= or envs= is missing: the line grants "all" by default
	// rather than by an explicit roles=* / envs=*.
	implicit bool
}

// Tokens is the set of bearer tokens the registry accepts, keyed by SHA-256. Immutable
// after loading; safe for concurrent use. Token values are never logged or kept in clear.
//
// File format (ParseTokens), one token per line; blank lines and lines starting with '#'
// are skipped:
//
//	TOKEN roles=executor,harness|* envs=env-1,env-2|*
//	sha256:HEX roles=… envs=…
//
// "sha256:" lines name a token by the lowercase hex SHA-256 of its value, so the file need
// not hold the secret itself. roles limits what the token may call (executor: register,
// validate; harness: connect); envs limits the environments; "*" means all, explicitly. A
// line without roles= or envs= is still accepted and means all (older files), but
// Unscoped reports it so that start-up can warn: `executor registry token` never writes one.
type Tokens struct {
	byHash map[[32]byte]tokenEntry
}

// TokenID returns the public id of the token whose SHA-256 is hash: the first 8 bytes of
// SHA-256("executor-registry-token-id/v1" || hash), in hex. It names a token in the store
// (outstanding authorizations per token), in harness rendezvous URLs (the subject the
// rendezvous counts sockets and failed streams by) and in warnings; it reveals nothing
// usable about the token.
func TokenID(hash [32]byte) string {
	h := sha256.New()
	h.Write([]byte("executor-registry-token-id/v1"))
	h.Write(hash[:])
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// UnscopedToken describes a token file line that grants every role or every environment.
type UnscopedToken struct {
	Line     int    // line number in the token file
	ID       string // TokenID
	Implicit bool   // no roles= or no envs=: "all" by default rather than by an explicit "*"
	AllRoles bool
	AllEnvs  bool
}

// Unscoped lists, in file order, the tokens that grant every role or every environment,
// whether by an explicit "*" or by a missing option. Start-up warns about them.
func (t *Tokens) Unscoped() []UnscopedToken {
	var out []UnscopedToken
	for _, e := range t.byHash {
		if e.roles == nil || e.envs == nil {
			out = append(out, UnscopedToken{Line: e.line, ID: e.id, Implicit: e.implicit, AllRoles: e.roles == nil, AllEnvs: e.envs == nil})
		}
	}
	slices.SortFunc(out, func(a, b UnscopedToken) int { return a.Line - b.Line })
	return out
}

// LoadTokens reads and parses a token file.
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading token file: %w", err)
	}
	defer f.Close()
	return ParseTokens(f)
}

// ParseTokens parses the token file format (see Tokens). Errors name the line number,
// never its content.
func ParseTokens(r io.Reader) (*Tokens, error) {
	t := &Tokens{byHash: make(map[[32]byte]tokenEntry)}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		var h [32]byte
		if hx, ok := strings.CutPrefix(fields[0], "sha256:"); ok {
			b, err := hex.DecodeString(hx)
			if err != nil || len(b) != 32 {
				return nil, fmt.Errorf("token file line %d: sha256: needs 64 hex digits", line)
			}
			copy(h[:], b)
		} else {
			h = sha256.Sum256([]byte(fields[0]))
		}
		e := tokenEntry{id: TokenID(h), line: line}
		var sawRoles, sawEnvs bool
		for _, opt := range fields[1:] {
			k, v, _ := strings.Cut(opt, "=")
			switch k {
			case "roles":
				sawRoles = true
				if v == "*" {
					e.roles = nil
					continue
				}
				e.roles = make(map[Role]bool)
				for _, r := range strings.Split(v, ",") {
					if Role(r) != RoleExecutor && Role(r) != RoleHarness {
						return nil, fmt.Errorf("token file line %d: unknown role %q", line, r)
					}
					e.roles[Role(r)] = true
				}
			case "envs":
				sawEnvs = true
				if v == "*" {
					continue
				}
				e.envs = make(map[string]bool)
				for _, env := range strings.Split(v, ",") {
					if env == "" {
						return nil, fmt.Errorf("token file line %d: empty environment in envs=", line)
					}
					e.envs[env] = true
				}
			default:
				return nil, fmt.Errorf("token file line %d: unknown option %q (want roles= or envs=)", line, k)
			}
		}
		e.implicit = !sawRoles || !sawEnvs
		t.byHash[h] = e
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading token file: %w", err)
	}
	if len(t.byHash) == 0 {
		return nil, fmt.Errorf("token file holds no tokens")
	}
	return t, nil
}

// authResult is the outcome of checking a request's bearer.
type authResult int

const (
	authOK         authResult = iota
	authMissing               // no or unknown token: 401
	authOutOfScope            // known token, wrong role or environment: 403
)

// check looks up the bearer token of an authorization header value; on authOK it also
// returns the token's TokenID.
func (t *Tokens) check(header string, role Role, env string) (authResult, string) {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || strings.TrimSpace(tok) == "" {
		return authMissing, ""
	}
	e, found := t.byHash[sha256.Sum256([]byte(strings.TrimSpace(tok)))]
	if !found {
		return authMissing, ""
	}
	if e.roles != nil && !e.roles[role] {
		return authOutOfScope, ""
	}
	if e.envs != nil && !e.envs[env] {
		return authOutOfScope, ""
	}
	return authOK, e.id
}
