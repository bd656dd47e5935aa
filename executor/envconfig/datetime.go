package envconfig

// Datetimes are kept as the canonical text the reference's toml_datetime prints:
// YYYY-MM-DD, 'T' between date and time (a space or 't' in the source becomes 'T'),
// HH:MM:SS, a fraction only when non-zero with trailing zeros trimmed and at most 9
// digits (more are truncated), and 'Z' or ±HH:MM (a '-00:00' offset prints '+00:00').
// PROBED on 0.171.0: `1979-05-27 07:32:00z` → `1979-05-27T07:32:00Z`,
// `.100+05:30` → `.1+05:30`, `07:32:00.000` → `07:32:00`,
// `.123456789123Z` → `.123456789Z`, `-00:00` → `+00:00`, `07:32` → `07:32:00`.

import (
	"fmt"
	"strings"
)

func canonicalDatetime(raw string) (string, error) {
	var b strings.Builder
	s, err := writeDate(&b, raw)
	if err != nil || s == "" {
		return b.String(), err
	}
	if len(s) < 5 || s[2] != ':' {
		return "", fmt.Errorf("datetime %q: bad time", raw)
	}
	b.WriteString(s[:5])
	s = s[5:]
	if len(s) >= 3 && s[0] == ':' {
		b.WriteString(s[:3])
		s = s[3:]
	} else {
		b.WriteString(":00") // TOML 1.1 lets seconds be omitted; the reference prints them
	}
	s = writeFraction(&b, s)
	if err := writeOffset(&b, s); err != nil {
		return "", fmt.Errorf("datetime %q: %w", raw, err)
	}
	return b.String(), nil
}

// writeDate writes the date part of raw, if any, and the 'T' before a time; it returns
// the rest ("" for a bare date).
func writeDate(b *strings.Builder, raw string) (string, error) {
	if len(raw) < 10 || raw[4] != '-' || raw[7] != '-' {
		return raw, nil // a local time
	}
	b.WriteString(raw[:10])
	s := raw[10:]
	if s == "" {
		return "", nil
	}
	if s[0] != 'T' && s[0] != 't' && s[0] != ' ' {
		return "", fmt.Errorf("datetime %q: bad separator", raw)
	}
	b.WriteByte('T')
	return s[1:], nil
}

// writeFraction writes a non-zero fraction of seconds (≤ 9 digits, trailing zeros
// trimmed) and returns what follows it.
func writeFraction(b *strings.Builder, s string) string {
	if s == "" || s[0] != '.' {
		return s
	}
	i := 1
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	frac := s[1:i]
	if len(frac) > 9 {
		frac = frac[:9]
	}
	if frac = strings.TrimRight(frac, "0"); frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return s[i:]
}

func writeOffset(b *strings.Builder, s string) error {
	switch {
	case s == "":
	case s == "Z" || s == "z":
		b.WriteByte('Z')
	case len(s) == 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':':
		if s[1:] == "00:00" {
			s = "+00:00"
		}
		b.WriteString(s)
	default:
		return fmt.Errorf("bad offset %q", s)
	}
	return nil
}
