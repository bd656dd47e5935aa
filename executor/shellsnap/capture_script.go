package shellsnap

// Capture scripts (§3.2). A capture runs the prepared command with its script
// replaced: [shell.path, "-lc", <capture script>, <extra args…>]. "-l" makes the shell
// read its login files itself; the script then emulates interactive startup (the rc
// file a terminal would read), prints captureMarker and two sections:
//
//	<startup output…> captureMarker <rendered state> NUL <NAME=value> NUL <NAME=value> NUL …
//
// The rendered state is shell source that restores options, functions and aliases; the
// entries after it are the exported environment (env -0). Non-exported variables are
// not captured (as in the reference).

// envDump prints the exported environment NUL-separated; env may be off PATH after the
// startup files changed it.
const envDump = `if command -v env >/dev/null 2>&1; then env -0; else /usr/bin/env -0 2>/dev/null || /bin/env -0; fi
`

// markerPrint prints captureMarker (printf's %b is not needed: octal escapes are POSIX).
const markerPrint = `printf '\000__CODEX_SHELL_SNAPSHOT_V1__\000'
`

const bashCapture = `if [ -z "${BASH_ENV-}" ] && [ -n "${HOME-}" ] && [ -r "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi
` + markerPrint + `shopt -p 2>/dev/null | while IFS= read -r __l; do case $__l in *login_shell*|*restricted_shell*) ;; *) printf '%s\n' "$__l";; esac; done
for __o in $(set -o | while read -r __n __v; do [ "$__v" = on ] && printf '%s\n' "$__n"; done); do
  case $__o in privileged|history|monitor|emacs|vi|histexpand|onecmd|noexec|interactive-comments) ;; *) printf 'set -o %s\n' "$__o";; esac
done
declare -f
alias -p
printf '\000'
` + envDump

const zshCapture = `if [ -r "${ZDOTDIR:-$HOME}/.zshrc" ]; then . "${ZDOTDIR:-$HOME}/.zshrc"; fi
` + markerPrint + `for __o in $(setopt); do
  case $__o in interactive|shinstdin|zle|monitor|privileged|norcs|rcs|singlecommand) ;; *) printf 'setopt %s 2>/dev/null\n' "$__o";; esac
done
typeset -f
alias -L
printf '\000'
` + envDump

// shCapture: POSIX sh has no portable function listing; like the reference's dash
// capture (PROBED on 0.171.0), functions and aliases are not restored, options are.
const shCapture = markerPrint + `for __o in $(set -o | while read -r __n __v; do [ "$__v" = on ] && printf '%s\n' "$__n"; done); do
  case $__o in interactive|monitor|emacs|vi|stdin|noexec|privileged) ;; *) printf 'set -o %s\n' "$__o";; esac
done
printf '\000'
` + envDump

// CaptureScript returns the capture script for k.
func CaptureScript(k Kind) string {
	switch k {
	case KindBash:
		return bashCapture
	case KindZsh:
		return zshCapture
	default:
		return shCapture
	}
}

// CaptureArgv returns argv with the script (argv[2]) replaced by k's capture script;
// the shell, "-lc" and extra arguments stay (§3.2). argv must satisfy Request.Plan.
func CaptureArgv(argv []string, k Kind) []string {
	out := append([]string(nil), argv...)
	out[2] = CaptureScript(k)
	return out
}
