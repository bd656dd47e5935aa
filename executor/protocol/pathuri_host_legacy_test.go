// Code generated for the differential fuzz of issue 27 from the pre-internal/whatwg
// implementation; deleted after the fuzz ran. DO NOT EDIT.

package protocol

// WHATWG host parsing for special URLs (file included), as rust-url does it:
//
//	"[" ipv6 "]"                         → IPv6, serialized compressed in lower-case hex
//	percent-decode → domain to ASCII     → forbidden domain code point = IDNA error
//	ends in a number                     → IPv4 (decimal, 0x hex, 0 octal parts)
//
// Deviation: full UTS #46 mapping is not implemented. ASCII labels are lower-cased;
// non-ASCII labels are lower-cased and Punycode-encoded without NFC or validity checks.
// Every non-localhost host is a Windows UNC authority and thus invalid on a POSIX executor,
// so this only affects how such a URI is spelled inside the rejection message.

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// legacyParseHost parses a non-empty host string and returns its serialization.
func legacyParseHost(input string) (string, error) {
	if strings.HasPrefix(input, "[") {
		if !strings.HasSuffix(input, "]") {
			return "", legacyUrlError(legacyErrInvalidIPv6)
		}
		return legacyParseIPv6(input[1 : len(input)-1])
	}
	decoded := legacyPercentDecode(input)
	if !utf8.ValidString(decoded) {
		return "", legacyUrlError(legacyErrIdna)
	}
	domain, err := legacyDomainToASCII(decoded)
	if err != nil {
		return "", err
	}
	if domain == "" {
		return "", legacyUrlError(legacyErrEmptyHost)
	}
	if legacyEndsInNumber(domain) {
		return legacyParseIPv4(domain)
	}
	return domain, nil
}

// legacyIsForbiddenDomainCodePoint implements the WHATWG "forbidden domain code point" set.
func legacyIsForbiddenDomainCodePoint(c byte) bool {
	if c <= 0x20 || c == 0x7F {
		return true
	}
	switch c {
	case '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|', '%':
		return true
	}
	return false
}

// legacyDomainToASCII lower-cases and Punycode-encodes a domain (see the deviation note above).
func legacyDomainToASCII(s string) (string, error) {
	labels := strings.Split(s, ".")
	for i, label := range labels {
		ascii := true
		for j := 0; j < len(label); j++ {
			if label[j] >= 0x80 {
				ascii = false
			} else if legacyIsForbiddenDomainCodePoint(label[j]) {
				return "", legacyUrlError(legacyErrIdna)
			}
		}
		label = strings.ToLower(label)
		if !ascii {
			enc, ok := legacyPunycodeEncode(label)
			if !ok {
				return "", legacyUrlError(legacyErrIdna)
			}
			label = "xn--" + enc
		}
		labels[i] = label
	}
	return strings.Join(labels, "."), nil
}

// legacyEndsInNumber implements the WHATWG "ends in a number checker".
func legacyEndsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := legacyParseIPv4Number(last)
	return ok
}

// legacyParseIPv4Number parses one IPv4 part: decimal, 0x/0X hex or 0-prefixed octal.
func legacyParseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	if len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s, base = s[2:], 16
	} else if len(s) >= 2 && s[0] == '0' {
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		// Overflowing but syntactically valid numbers are still numbers (too large).
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 1 << 40, true
		}
		return 0, false
	}
	return n, true
}

// legacyParseIPv4 implements the WHATWG IPv4 parser and returns the dotted serialization.
func legacyParseIPv4(s string) (string, error) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", legacyUrlError(legacyErrInvalidIPv4)
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := legacyParseIPv4Number(p)
		if !ok {
			return "", legacyUrlError(legacyErrInvalidIPv4)
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", legacyUrlError(legacyErrInvalidIPv4)
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return "", legacyUrlError(legacyErrInvalidIPv4)
	}
	ipv4 := last
	for i, n := range nums[:len(nums)-1] {
		ipv4 += n << (8 * (3 - i))
	}
	return strconv.Itoa(int(ipv4>>24)) + "." + strconv.Itoa(int(ipv4>>16&0xFF)) + "." +
		strconv.Itoa(int(ipv4>>8&0xFF)) + "." + strconv.Itoa(int(ipv4&0xFF)), nil
}

// legacyParseIPv6 parses the inside of "[...]" and returns "[serialization]".
func legacyParseIPv6(s string) (string, error) {
	if strings.ContainsAny(s, "%") || s == "" {
		return "", legacyUrlError(legacyErrInvalidIPv6)
	}
	addr, err := netip.ParseAddr(s)
	if err != nil || !addr.Is6() {
		return "", legacyUrlError(legacyErrInvalidIPv6)
	}
	a := addr.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(a[2*i])<<8 | uint16(a[2*i+1])
	}
	// Find the first longest run (length > 1) of zero pieces to compress.
	bestStart, bestLen := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestStart, bestLen = i, j-i
		}
		i = j
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < 8; i++ {
		if i == bestStart {
			if i == 0 {
				b.WriteString("::")
			} else {
				b.WriteByte(':')
			}
			i += bestLen - 1
			continue
		}
		b.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
		if i != 7 {
			b.WriteByte(':')
		}
	}
	b.WriteByte(']')
	return b.String(), nil
}

// legacyPercentDecode decodes %XX escapes; a '%' not followed by two hex digits stays literal.
func legacyPercentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && legacyIsHex(s[i+1]) && legacyIsHex(s[i+2]) {
			b = append(b, legacyUnhex(s[i+1])<<4|legacyUnhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func legacyIsHex(c byte) bool { return legacyIsASCIIDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

func legacyUnhex(c byte) byte {
	if legacyIsASCIIDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// legacyPunycodeEncode implements RFC 3492 encoding of one label.
func legacyPunycodeEncode(label string) (string, bool) {
	const (
		base, tMin, tMax, skew, damp = 36, 1, 26, 38, 700
		initialBias, initialN        = 72, 128
	)
	runes := []rune(label)
	var out []byte
	for _, r := range runes {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	b := len(out)
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	n, delta, bias := rune(initialN), 0, initialBias
	adapt := func(delta, numPoints int, first bool) int {
		if first {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / numPoints
		k := 0
		for delta > ((base-tMin)*tMax)/2 {
			delta /= base - tMin
			k += base
		}
		return k + (base-tMin+1)*delta/(delta+skew)
	}
	digit := func(d int) byte {
		if d < 26 {
			return byte('a' + d)
		}
		return byte('0' + d - 26)
	}
	for h < len(runes) {
		m := rune(0x7FFFFFFF)
		for _, r := range runes {
			if r >= n && r < m {
				m = r
			}
		}
		delta += int(m-n) * (h + 1)
		n = m
		for _, r := range runes {
			if r < n {
				delta++
			}
			if r == n {
				q := delta
				for k := base; ; k += base {
					t := k - bias
					if t < tMin {
						t = tMin
					} else if t > tMax {
						t = tMax
					}
					if q < t {
						break
					}
					out = append(out, digit(t+(q-t)%(base-t)))
					q = (q - t) / (base - t)
				}
				out = append(out, digit(q))
				bias = adapt(delta, h+1, h == b)
				delta = 0
				h++
			}
		}
		delta++
		n++
	}
	return string(out), true
}
