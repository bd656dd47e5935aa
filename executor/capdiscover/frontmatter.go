package capdiscover

// SKILL.md front matter (spec/capabilities-0.171.0.md §5; every rule below observed from
// codex 0.171.0 and 0.169.0 through capabilities/discoverV2):
//
//	---                      first line, surrounding whitespace ignored
//	name: my-skill           optional; absent, null or blank → the skill directory's name
//	description: Does X      required, non-blank
//	metadata:                optional; if present, a mapping (null is refused)
//	  short-description: X   optional; blank → null
//	---                      the first later line that trims to "---"
//
// The block between the markers is YAML. name, description and short-description take
// any scalar as its text ("name: 5" is "5", "1.50" stays "1.50"); a sequence or mapping
// refuses the skill, as does a repeated name, description, metadata or short-description
// key (other keys may repeat). Values are collapsed to single-spaced lines. A name longer
// than MaxSkillNameChars characters refuses the skill. When the block is not valid YAML,
// lines whose plain value contains ": " or is an invalid flow-like scalar ([, {, @, `)
// are single-quoted and the block parsed once more ("description: Build for AWS: ECS").

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// skillFrontMatter is a parsed, validated front matter.
type skillFrontMatter struct {
	Name             string
	Description      string
	ShortDescription *string
}

var (
	errNoFrontMatter   = errors.New("capdiscover: missing YAML frontmatter delimited by ---")
	errFrontMatterType = errors.New("capdiscover: front matter field has the wrong type")
	errDuplicateField  = errors.New("capdiscover: duplicate field")
	errMissingField    = errors.New("capdiscover: missing field")
	errFieldTooLong    = errors.New("capdiscover: field exceeds its maximum length")
)

// parseSkillFrontMatter parses the front matter of a SKILL.md's contents; defaultName is
// the name used when the front matter gives none.
func parseSkillFrontMatter(contents, defaultName string) (skillFrontMatter, error) {
	block, ok := extractFrontMatter(contents)
	if !ok {
		return skillFrontMatter{}, errNoFrontMatter
	}
	raw, err := decodeFrontMatter(block)
	if err != nil {
		repaired, changed := repairFrontMatter(block)
		if !changed {
			return skillFrontMatter{}, err
		}
		if raw, err = decodeFrontMatter(repaired); err != nil {
			return skillFrontMatter{}, err
		}
	}
	out := skillFrontMatter{Name: defaultName}
	if raw.name != nil {
		if n := singleLine(*raw.name); n != "" {
			out.Name = n
		}
	}
	if raw.description != nil {
		out.Description = singleLine(*raw.description)
	}
	if raw.short != nil {
		if s := singleLine(*raw.short); s != "" {
			out.ShortDescription = &s
		}
	}
	switch {
	case out.Name == "":
		return skillFrontMatter{}, errMissingField
	case utf8.RuneCountInString(out.Name) > MaxSkillNameChars:
		return skillFrontMatter{}, errFieldTooLong
	case out.Description == "":
		return skillFrontMatter{}, errMissingField
	}
	return out, nil
}

// extractFrontMatter returns the lines between the opening and closing markers, joined
// with "\n" (lines split as Rust's str::lines: on "\n", one trailing "\r" dropped).
func extractFrontMatter(contents string) (string, bool) {
	lines := rustLines(contents)
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return "", false
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			if i == 1 {
				return "", false // an empty block
			}
			return strings.Join(lines[1:i], "\n"), true
		}
	}
	return "", false
}

// rustLines splits s as Rust's str::lines does.
func rustLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// singleLine collapses every run of Unicode white space to one space and trims the ends.
func singleLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// rawFrontMatter holds the three optional texts (nil: absent or null).
type rawFrontMatter struct {
	name, description, short *string
}

// decodeFrontMatter decodes block as one YAML mapping.
func decodeFrontMatter(block string) (rawFrontMatter, error) {
	var out rawFrontMatter
	root, err := yamlDocument(block)
	if err != nil {
		return out, err
	}
	err = structFields(root, []string{"name", "description", "metadata"}, func(k string, v *yaml.Node) (err error) {
		switch k {
		case "name":
			out.name, err = optionalString(v)
		case "description":
			out.description, err = optionalString(v)
		default: // metadata: a mapping (null refused), of which only short-description counts
			err = structFields(v, []string{"short-description"}, func(_ string, sv *yaml.Node) (err error) {
				out.short, err = optionalString(sv)
				return err
			})
		}
		return err
	})
	return out, err
}

// repairFrontMatter single-quotes the plain scalar values the reference's line-oriented
// repair quotes: a value containing ": " (a colon followed by white space), or one that
// starts with '[', '{', '@' or '`' and is not valid YAML on its own. Block scalars (| and
// >) and their indented bodies, quoted values and lines without "key: " stay as they are;
// a trailing " #comment" is kept outside the quotes. changed is false when no line was
// rewritten.
func repairFrontMatter(block string) (string, bool) {
	changed := false
	blockIndent := -1
	lines := rustLines(block)
	out := make([]string, 0, len(lines))
	for _, line := range lines {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if blockIndent >= 0 {
			if strings.TrimSpace(line) == "" || indent > blockIndent {
				out = append(out, line)
				continue
			}
			blockIndent = -1
		}
		key, value, found := strings.Cut(line, ":")
		if !found || strings.TrimSpace(key) == "" || (value != "" && !startsWithSpace(value)) {
			out = append(out, line)
			continue
		}
		trimmed := strings.TrimLeftFunc(value, isRustSpace)
		lead := value[:len(value)-len(trimmed)]
		scalar, comment := splitComment(trimmed)
		scalar = strings.TrimRightFunc(scalar, isRustSpace)
		if scalar == "" {
			out = append(out, line)
			continue
		}
		switch scalar[0] {
		case '|', '>':
			blockIndent = indent
			out = append(out, line)
			continue
		case '\'', '"':
			out = append(out, line)
			continue
		}
		flowLike := strings.ContainsAny(scalar[:1], "[{@`") && !validYAML(scalar)
		if !hasColonSpace(scalar) && !flowLike {
			out = append(out, line)
			continue
		}
		out = append(out, key+":"+lead+"'"+strings.ReplaceAll(scalar, "'", "''")+"'"+comment)
		changed = true
	}
	return strings.Join(out, "\n"), changed
}

func startsWithSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isRustSpace(r)
}

// isRustSpace is Rust's char::is_whitespace: the Unicode White_Space property, which is
// also the set unicode.IsSpace reports.
func isRustSpace(r rune) bool { return unicode.IsSpace(r) }

// splitComment splits a value at the first '#' that starts it or follows white space;
// the comment keeps the white space before it.
func splitComment(s string) (scalar, comment string) {
	prevSpace := true
	for i, r := range s {
		if r == '#' && prevSpace {
			cut := len(strings.TrimRightFunc(s[:i], isRustSpace))
			return s[:cut], s[cut:]
		}
		prevSpace = isRustSpace(r)
	}
	return s, ""
}

// hasColonSpace reports whether s holds a ':' followed by white space.
func hasColonSpace(s string) bool {
	for i := 0; i < len(s)-1; i++ {
		if s[i] == ':' {
			r, _ := utf8.DecodeRuneInString(s[i+1:])
			if isRustSpace(r) {
				return true
			}
		}
	}
	return false
}

func validYAML(s string) bool {
	var n yaml.Node
	return yaml.Unmarshal([]byte(s), &n) == nil
}
