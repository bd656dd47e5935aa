package envconfig

// Datetimes are kept as the canonical text the reference's toml_datetime prints:
// YYYY-MM-DD, 'T' between date and time (a space or 't' in the source becomes 'T'),
// HH:MM:SS, a fraction only when non-zero with trailing zeros trimmed and at most 9
// digits (more are truncated), and 'Z' or ±HH:MM (a '-00:00' offset prints '+00:00').
// PROBED on 0.171.0: `1979-05-27 07:32:00z` → `1979-05-27T07:32:00Z`,
// `.100+05:30` → `.1+05:30`, `07:32:00.000` → `07:32:00`,
// `.123456789123Z` → `.123456789Z`, `-00:00` → `+00:00`.

import (
	"fmt"
	"strings"
)

func canonicalDatetime(raw string) (string, error) {
	var b strings.Builder
	s := raw
	if len(s) >= 10 && s[4] == '-' && s[7] == '-' {
		b.WriteString(s[:10])
		s = s[10:]
		if s == "" {
			return b.String(), nil
		}
		if s[0] != 'T' && s[0] != 't' && s[0] != ' ' {
			return "", fmt.Errorf("datetime %q: bad separator", raw)
		}
		b.WriteByte('T')
		s = s[1:]
	}
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return "", fmt.Errorf("datetime %q: bad time", raw)
	}
	b.WriteString(s[:8])
	s = s[8:]
	if len(s) > 0 && s[0] == '.' {
		i := 1
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac := s[1:i]
		if len(frac) > 9 {
			frac = frac[:9]
		}
		frac = strings.TrimRight(frac, "0")
		if frac != "" {
			b.WriteByte('.')
			b.WriteString(frac)
		}
		s = s[i:]
	}
	switch {
	case s == "":
	case s == "Z" || s == "z":
		b.WriteByte('Z')
	case len(s) == 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':':
		if s[1:] == "00:00" {
			b.WriteString("+00:00")
		} else {
			b.WriteString(s)
		}
	default:
		return "", fmt.Errorf("datetime %q: bad offset", raw)
	}
	return b.String(), nil
}
