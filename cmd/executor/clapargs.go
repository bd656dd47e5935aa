package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// A small command-line parser with the rules of clap (the Rust parser the reference's
// `codex exec-server` uses), so that a command line written for the reference parses the
// same way here: long options as `--name value` or `--name=value`, the one short option
// as `-c value`, `-cvalue` or `-c=value`; switches refuse a value; an option given twice
// is refused unless it is repeatable; an option whose next word looks like a flag has no
// value; environment twins fill an option the command line left out (a switch's twin
// takes only "true" or "false"); then conflicts, then requirements. Every refusal is a
// usage error (errUsage: exit status 2), as clap's. Messages are in clap's shape
// ("error: …" lines are printed by main as "Error: …"): scripts match on the exit status.

// clapArg is one option of a clapCommand.
type clapArg struct {
	long      string
	short     byte   // 0: none
	value     string // value name ("URL"); "" for a switch
	multi     bool   // repeatable (values accumulate)
	possible  []string
	env       string // environment twin ("" none)
	check     func(string) error
	requires  []string // longs that must be present too
	conflicts []string // longs that must not be present with it
	// requiredIf: when this option's value equals requiredIf[0], requiredIf[1:] are required.
	requiredIf []string
}

// clapCommand is a command's option table.
type clapCommand struct {
	name        string // "exec-server", "exec-server forward"
	args        []*clapArg
	required    []string // longs required always
	subcommands []string
}

// clapMatches is the result of a parse: each present option's values (a switch has one
// empty value), and the subcommand with its unparsed arguments.
type clapMatches struct {
	values  map[string][]string
	fromEnv map[string]bool
	sub     string
	subArgs []string
}

func (m *clapMatches) has(long string) bool { _, ok := m.values[long]; return ok }

// get returns the option's (last) value, or def when absent.
func (m *clapMatches) get(long, def string) string {
	if v := m.values[long]; len(v) > 0 {
		return v[len(v)-1]
	}
	return def
}

func (m *clapMatches) all(long string) []string { return m.values[long] }

func (c *clapCommand) find(long string) *clapArg {
	for _, a := range c.args {
		if a.long == long {
			return a
		}
	}
	return nil
}

func (a *clapArg) display() string {
	if a.value == "" {
		return "--" + a.long
	}
	return fmt.Sprintf("--%s <%s>", a.long, a.value)
}

func clapError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// errClapHelp asks for the command's help (-h, --help, or the help subcommand).
var errClapHelp = errors.New("help requested")

// looksLikeFlag is clap's test for "the next word is not this option's value".
func looksLikeFlag(s string) bool { return len(s) > 1 && s[0] == '-' }

// parse parses argv against c; getenv reads the environment twins (nil: os.LookupEnv).
func (c *clapCommand) parse(argv []string, lookupEnv func(string) (string, bool)) (*clapMatches, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	m := &clapMatches{values: map[string][]string{}, fromEnv: map[string]bool{}}
	set := func(a *clapArg, v string) error {
		if _, dup := m.values[a.long]; dup && !a.multi {
			return clapError("the argument '%s' cannot be used multiple times", a.display())
		}
		if a.value != "" {
			if len(a.possible) > 0 && !contains(a.possible, v) {
				return clapError("invalid value '%s' for '%s' [possible values: %s]", v, a.display(), strings.Join(a.possible, ", "))
			}
			if a.check != nil {
				if err := a.check(v); err != nil {
					return clapError("invalid value '%s' for '%s': %v", v, a.display(), err)
				}
			}
		}
		m.values[a.long] = append(m.values[a.long], v)
		return nil
	}
	for i := 0; i < len(argv); i++ {
		w := argv[i]
		var a *clapArg
		var val string
		hasVal := false
		switch {
		case w == "--":
			if i+1 < len(argv) {
				return nil, clapError("unexpected argument '%s' found", argv[i+1])
			}
			continue
		case w == "-h" || w == "--help":
			return nil, errClapHelp
		case strings.HasPrefix(w, "--"):
			name := w[2:]
			name, val, hasVal = strings.Cut(name, "=")
			if a = c.find(name); a == nil {
				return nil, clapError("unexpected argument '--%s' found", name)
			}
		case looksLikeFlag(w):
			for _, x := range c.args {
				if x.short != 0 && x.short == w[1] {
					a = x
				}
			}
			if a == nil {
				return nil, clapError("unexpected argument '%s' found", w)
			}
			if rest := w[2:]; rest != "" {
				val, hasVal = strings.TrimPrefix(rest, "="), true
			}
		default:
			if len(c.subcommands) == 0 {
				return nil, clapError("unexpected argument '%s' found", w)
			}
			if w == "help" {
				m.sub, m.subArgs = "help", argv[i+1:]
				return m, nil
			}
			if !contains(c.subcommands, w) {
				return nil, clapError("unrecognized subcommand '%s'", w)
			}
			m.sub, m.subArgs = w, argv[i+1:]
			i = len(argv)
			continue
		}
		if a.value == "" {
			if hasVal {
				return nil, clapError("unexpected value '%s' for '--%s' found; no more were expected", val, a.long)
			}
			if err := set(a, ""); err != nil {
				return nil, err
			}
			continue
		}
		if !hasVal {
			if i+1 >= len(argv) || looksLikeFlag(argv[i+1]) {
				return nil, clapError("a value is required for '%s' but none was supplied", a.display())
			}
			i++
			val = argv[i]
		}
		if err := set(a, val); err != nil {
			return nil, err
		}
	}
	// Environment twins: only for options the command line left out.
	for _, a := range c.args {
		if a.env == "" || m.has(a.long) {
			continue
		}
		v, ok := lookupEnv(a.env)
		if !ok {
			continue
		}
		if a.value == "" { // a switch: "true" sets it, "false" leaves it unset
			switch v {
			case "true":
				m.values[a.long], m.fromEnv[a.long] = []string{""}, true
			case "false":
			case "":
				return nil, clapError("a value is required for '--%s' but none was supplied [possible values: true, false]", a.long)
			default:
				return nil, clapError("invalid value '%s' for '--%s' [possible values: true, false]", v, a.long)
			}
			continue
		}
		if err := set(a, v); err != nil {
			return nil, err
		}
		m.fromEnv[a.long] = true
	}
	for _, a := range c.args {
		if !m.has(a.long) {
			continue
		}
		for _, other := range a.conflicts {
			if m.has(other) {
				return nil, clapError("the argument '%s' cannot be used with '%s'", a.display(), c.find(other).display())
			}
		}
	}
	var missing []string
	need := func(long string) {
		if !m.has(long) && !contains(missing, long) {
			missing = append(missing, long)
		}
	}
	for _, r := range c.required {
		need(r)
	}
	for _, a := range c.args {
		if !m.has(a.long) {
			continue
		}
		for _, r := range a.requires {
			need(r)
			// Requirements are transitive (--aws-sigv4 → --remote → --environment-id).
			if ra := c.find(r); ra != nil {
				for _, rr := range ra.requires {
					need(rr)
				}
			}
		}
		if len(a.requiredIf) > 1 && m.get(a.long, "") == a.requiredIf[0] {
			for _, r := range a.requiredIf[1:] {
				need(r)
			}
		}
	}
	if len(missing) > 0 {
		var b strings.Builder
		for _, long := range missing {
			b.WriteString("\n  " + c.find(long).display())
		}
		return nil, clapError("the following required arguments were not provided:%s", b.String())
	}
	return m, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
