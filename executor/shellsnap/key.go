package shellsnap

import "encoding/json"

// Key returns the cache key of a start (§3.3): the snapshot request, the native cwd,
// the envPolicy and the sandbox context, each as given. The request env and the
// command's extra arguments are not part of it (PROBED: changing env did not
// re-capture). envPolicy and sandbox are marshalled as JSON; marshal failures (not
// expected for the protocol types) make the key unique to the failure text.
func Key(r *Request, cwd string, envPolicy, sandbox any) string {
	b, err := json.Marshal(struct {
		Scope     string    `json:"s"`
		Shell     ShellInfo `json:"h"`
		Cwd       string    `json:"c"`
		EnvPolicy any       `json:"e"`
		Sandbox   any       `json:"x"`
	}{r.ScopeID, r.Shell, cwd, envPolicy, sandbox})
	if err != nil {
		return "error:" + err.Error()
	}
	return string(b)
}
