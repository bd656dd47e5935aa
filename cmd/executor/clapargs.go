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

// parse parses argv against c; lookupEnv reads the environment twins (nil: os.LookupEnv).
// The order is clap's: the words (value errors as they come), the environment twins, the
// conflicts, then the requirements.
func (c *clapCommand) parse(argv []string, lookupEnv func(string) (string, bool)) (*clapMatches, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	m := &clapMatches{values: map[string][]string{}, fromEnv: map[string]bool{}}
	if err := c.parseWords(m, argv); err != nil {
		return nil, err
	}
	if m.sub == "help" {
		return m, nil
	}
	if err := c.applyEnv(m, lookupEnv); err != nil {
		return nil, err
	}
	if err := c.checkConflicts(m); err != nil {
		return nil, err
	}
	return m, c.checkRequired(m)
}

// set records one value of a, checking repetition, possible values and the validator.
func (m *clapMatches) set(a *clapArg, v string) error {
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

// word is one command-line word classified: an option (with an attached value or not),
// or a subcommand with the words after it.
type word struct {
	arg    *clapArg
	val    string
	hasVal bool
	sub    string
}

// classify classifies argv[i]. A final "--" gives an empty word; a subcommand gives
// its name in sub.
func (c *clapCommand) classify(argv []string, i int) (w word, err error) {
	s := argv[i]
	switch {
	case s == "--":
		if i+1 < len(argv) {
			return w, clapError("unexpected argument '%s' found", argv[i+1])
		}
		return w, nil
	case s == "-h" || s == "--help":
		return w, errClapHelp
	case strings.HasPrefix(s, "--"):
		name, val, hasVal := strings.Cut(s[2:], "=")
		if w.arg = c.find(name); w.arg == nil {
			return w, clapError("unexpected argument '--%s' found", name)
		}
		w.val, w.hasVal = val, hasVal
		return w, nil
	case looksLikeFlag(s):
		for _, x := range c.args {
			if x.short != 0 && x.short == s[1] {
				w.arg = x
			}
		}
		if w.arg == nil {
			return w, clapError("unexpected argument '%s' found", s)
		}
		if rest := s[2:]; rest != "" {
			w.val, w.hasVal = strings.TrimPrefix(rest, "="), true
		}
		return w, nil
	}
	if len(c.subcommands) == 0 {
		return w, clapError("unexpected argument '%s' found", s)
	}
	if s != "help" && !contains(c.subcommands, s) {
		return w, clapError("unrecognized subcommand '%s'", s)
	}
	w.sub = s
	return w, nil
}

// parseWords reads argv into m, stopping at a subcommand.
func (c *clapCommand) parseWords(m *clapMatches, argv []string) error {
	for i := 0; i < len(argv); i++ {
		w, err := c.classify(argv, i)
		switch {
		case err != nil:
			return err
		case w.sub != "":
			m.sub, m.subArgs = w.sub, argv[i+1:]
			return nil
		case w.arg == nil: // a final "--"
			continue
		case w.arg.value == "":
			if w.hasVal {
				return clapError("unexpected value '%s' for '--%s' found; no more were expected", w.val, w.arg.long)
			}
			w.val = ""
		case !w.hasVal:
			if i+1 >= len(argv) || looksLikeFlag(argv[i+1]) {
				return clapError("a value is required for '%s' but none was supplied", w.arg.display())
			}
			i++
			w.val = argv[i]
		}
		if err := m.set(w.arg, w.val); err != nil {
			return err
		}
	}
	return nil
}

// applyEnv fills the options the command line left out from their environment twins.
func (c *clapCommand) applyEnv(m *clapMatches, lookupEnv func(string) (string, bool)) error {
	for _, a := range c.args {
		if a.env == "" || m.has(a.long) {
			continue
		}
		v, ok := lookupEnv(a.env)
		if !ok {
			continue
		}
		if a.value != "" {
			if err := m.set(a, v); err != nil {
				return err
			}
			m.fromEnv[a.long] = true
			continue
		}
		switch v { // a switch: "true" sets it, "false" leaves it unset
		case "true":
			m.values[a.long], m.fromEnv[a.long] = []string{""}, true
		case "false":
		case "":
			return clapError("a value is required for '--%s' but none was supplied [possible values: true, false]", a.long)
		default:
			return clapError("invalid value '%s' for '--%s' [possible values: true, false]", v, a.long)
		}
	}
	return nil
}

func (c *clapCommand) checkConflicts(m *clapMatches) error {
	for _, a := range c.args {
		if !m.has(a.long) {
			continue
		}
		for _, other := range a.conflicts {
			if m.has(other) {
				return clapError("the argument '%s' cannot be used with '%s'", a.display(), c.find(other).display())
			}
		}
	}
	return nil
}

// checkRequired lists every missing requirement: the command's own, each present
// option's (transitively one level: --aws-sigv4 → --remote → --environment-id) and the
// value-dependent ones (--remote-transport direct → --aws-sigv4).
func (c *clapCommand) checkRequired(m *clapMatches) error {
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
	if len(missing) == 0 {
		return nil
	}
	var b strings.Builder
	for _, long := range missing {
		b.WriteString("\n  " + c.find(long).display())
	}
	return clapError("the following required arguments were not provided:%s", b.String())
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
