package shellsnap

import (
	"fmt"
	"strconv"
	"strings"
)

// Command rewrite (§3.4). The shell is started without its startup files (bash -p,
// zsh -f) so they cannot re-introduce state the policy filtered, sources the saved
// state, then runs the original script; extra arguments after the script stay, so $0
// and the positional parameters are unchanged:
//
//	bash: [path, "-pc", "set +o privileged\n" + restore + script, extra…]
//	zsh:  [path, "-fc", "setopt RCS\n" + restore + script, extra…]
//	sh:   [path, "-c", restore + script, extra…]
//
// Two transports carry the state:
//
//   - file (bash, zsh, unsandboxed): an inherited descriptor StateFD holding the state,
//     sourced with ". /dev/fd/15"; the state's last line closes it, so the user script
//     does not see it. This is what codex 0.171.0 does, and what $BASH_EXECUTION_STRING
//     shows.
//   - environment (sh always; every shell under a sandbox, whose launcher does not pass
//     extra descriptors): variables __CODEX_SHELL_SNAPSHOT_STATE_<n> of at most
//     EnvChunkBytes each, unset by the eval that restores them.

const restoreFailed = "then printf 'failed to restore shell snapshot\\n' >&2; fi\n"

// Rewritten is a command with its snapshot applied.
type Rewritten struct {
	Argv []string
	// ChunkEnv holds the environment transport's variables (nil with the file
	// transport); the caller adds them last, after the request env.
	ChunkEnv map[string]string
	// StateFile is the file transport's content for descriptor StateFD ("" with the
	// environment transport).
	StateFile string
}

// Rewrite applies s to argv (which satisfied Request.Plan). fileOK says whether the
// spawn path can pass descriptor StateFD.
func Rewrite(argv []string, s *Snapshot, fileOK bool) *Rewritten {
	out := &Rewritten{Argv: append([]string(nil), argv...)}
	useFile := fileOK && s.Kind != KindSh
	var restore string
	if useFile {
		fd := strconv.Itoa(StateFD)
		restore = "if ! . /dev/fd/" + fd + " >/dev/null; " + restoreFailed
		out.StateFile = s.State + closeStateFD(s.Kind, fd)
	} else {
		var names, refs strings.Builder
		out.ChunkEnv = make(map[string]string)
		for i, chunk := range chunks(s.State, EnvChunkBytes) {
			name := fmt.Sprintf("%s%d", envChunkPrefix, i)
			out.ChunkEnv[name] = chunk
			names.WriteString(" " + name)
			refs.WriteString("${" + name + "}")
		}
		if len(out.ChunkEnv) == 0 {
			name := envChunkPrefix + "0"
			out.ChunkEnv[name] = ""
			names.WriteString(" " + name)
			refs.WriteString("${" + name + "}")
		}
		restore = "if ! eval \"unset" + names.String() + "\n" + refs.String() + "\" >/dev/null; " + restoreFailed
	}
	switch s.Kind {
	case KindBash:
		out.Argv[1] = "-pc"
		out.Argv[2] = "set +o privileged\n" + restore + argv[2]
	case KindZsh:
		out.Argv[1] = "-fc"
		out.Argv[2] = "setopt RCS\n" + restore + argv[2]
	default:
		out.Argv[1] = "-c"
		out.Argv[2] = restore + argv[2]
	}
	return out
}

// closeStateFD is the state file's last line: it closes the inherited descriptor, so
// the user script does not see it. zsh's N<&- takes one digit only.
func closeStateFD(k Kind, fd string) string {
	if k == KindZsh {
		return "\n__codex_fd=" + fd + "; exec {__codex_fd}<&-; unset __codex_fd\n"
	}
	return "\nexec " + fd + "<&-\n"
}

// chunks splits s into pieces of at most n bytes, never inside a UTF-8 sequence (the
// environment is text to the shells).
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
