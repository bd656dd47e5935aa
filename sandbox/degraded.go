package sandbox

import (
	"fmt"

	"github.com/execlab/executor/sandbox/policy"
)

// landlockRefusal returns why the degraded Landlock backend cannot enforce p faithfully
// (spec/sandbox.md §3.11), or "" when it can. Landlock only grants (rights are unions
// along the path), so anything that narrows access below a grant is refused.
func landlockRefusal(p *policy.Policy, managed bool) string {
	if managed {
		return "managed network"
	}
	if p.FullWrite() {
		return ""
	}
	if len(p.DenyGlobs) > 0 {
		return "deny glob " + p.DenyGlobs[0]
	}
	for _, w := range p.Entries {
		if w.Access != policy.AccessWrite {
			continue
		}
		if !insideOtherWrite(p, w.Path) && len(p.ProtectedNames(w.Path)) > 0 {
			return "writable root " + w.Path
		}
		for _, e := range p.Entries {
			if e.Path != w.Path && policy.IsWithin(e.Path, w.Path) && e.Access != policy.AccessWrite {
				return fmt.Sprintf("%s path %s", accessNoun(e.Access), e.Path)
			}
		}
	}
	for _, r := range p.Entries {
		if r.Access != policy.AccessRead {
			continue
		}
		for _, e := range p.Entries {
			if e.Access == policy.AccessDeny && policy.IsWithin(e.Path, r.Path) {
				return "deny path " + e.Path
			}
		}
	}
	return ""
}

func accessNoun(a policy.Access) string {
	if a == policy.AccessDeny {
		return "deny"
	}
	return "read-only"
}

// insideOtherWrite reports whether dir lies strictly inside another write entry (its
// metadata is then judged against the outer root).
func insideOtherWrite(p *policy.Policy, dir string) bool {
	for _, e := range p.Entries {
		if e.Access == policy.AccessWrite && e.Path != dir && policy.IsWithin(dir, e.Path) {
			return true
		}
	}
	return false
}
