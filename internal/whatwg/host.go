package whatwg

// WHATWG host parsing for special URLs (file included), as rust-url does it:
//
//	"[" ipv6 "]"                         → IPv6, serialized compressed in lower-case hex
//	percent-decode → domain to ASCII     → forbidden domain code point = IDNA error
//	ends in a number                     → IPv4 (decimal, 0x hex, 0 octal parts)
//
// Deviation: full UTS #46 mapping is not implemented. ASCII labels are lower-cased;
// non-ASCII labels are lower-cased and Punycode-encoded without NFC or validity checks.
// Every non-localhost file host is a Windows UNC authority and thus invalid on a POSIX
// executor, so this only affects how such a URI is spelled inside the rejection message.

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseHost parses a non-empty host of a special URL and returns its serialization.
func ParseHost(input string) (string, error) {
	if strings.HasPrefix(input, "[") {
		if !strings.HasSuffix(input, "]") {
			return "", ErrInvalidIPv6
		}
		return ParseIPv6(input[1 : len(input)-1])
	}
	decoded := PercentDecode(input)
	if !utf8.ValidString(decoded) {
		return "", ErrIdna
	}
	domain, err := domainToASCII(decoded)
	if err != nil {
		return "", err
	}
	if domain == "" {
		return "", ErrEmptyHost
	}
	if endsInNumber(domain) {
		ip, ok := ParseIPv4(domain)
		if !ok {
			return "", ErrInvalidIPv4
		}
		return FormatIPv4(ip), nil
	}
	return domain, nil
}

// isForbiddenDomainCodePoint implements the WHATWG "forbidden domain code point" set.
func isForbiddenDomainCodePoint(c byte) bool {
	if c <= 0x20 || c == 0x7F {
		return true
	}
	switch c {
	case '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|', '%':
		return true
	}
	return false
}

// domainToASCII lower-cases and Punycode-encodes a domain (see the deviation note above).
func domainToASCII(s string) (string, error) {
	labels := strings.Split(s, ".")
	for i, label := range labels {
		ascii := true
		for j := 0; j < len(label); j++ {
			if label[j] >= 0x80 {
				ascii = false
			} else if isForbiddenDomainCodePoint(label[j]) {
				return "", ErrIdna
			}
		}
		label = strings.ToLower(label)
		if !ascii {
			enc, ok := punycodeEncode(label)
			if !ok {
				return "", ErrIdna
			}
			label = "xn--" + enc
		}
		labels[i] = label
	}
	return strings.Join(labels, "."), nil
}

// endsInNumber implements the WHATWG "ends in a number checker".
func endsInNumber(s string) bool {
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
	_, ok := ParseIPv4Number(last)
	return ok
}

// ParseIPv4Number parses one IPv4 part: decimal, 0x/0X hex or 0-prefixed octal ("0x" and
// "0" alone are 0). A syntactically valid number too large for 64 bits is 1<<40 (too large
// for any part).
func ParseIPv4Number(s string) (uint64, bool) {
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

// ParseIPv4 implements the WHATWG IPv4 parser: 1–4 dot-separated numbers (one trailing dot
// allowed), every one but the last at most 255, the last filling the remaining bytes.
func ParseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ParseIPv4Number(p)
		if !ok {
			return 0, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return 0, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return 0, false
	}
	ipv4 := last
	for i, n := range nums[:len(nums)-1] {
		ipv4 += n << (8 * (3 - i))
	}
	return uint32(ipv4), true
}

// FormatIPv4 renders an IPv4 address in dotted decimal.
func FormatIPv4(ip uint32) string {
	return strconv.Itoa(int(ip>>24)) + "." + strconv.Itoa(int(ip>>16&0xFF)) + "." +
		strconv.Itoa(int(ip>>8&0xFF)) + "." + strconv.Itoa(int(ip&0xFF))
}

// ParseIPv6 parses the inside of "[...]" and returns "[serialization]".
func ParseIPv6(s string) (string, error) {
	if strings.ContainsAny(s, "%") || s == "" {
		return "", ErrInvalidIPv6
	}
	addr, err := netip.ParseAddr(s)
	if err != nil || !addr.Is6() {
		return "", ErrInvalidIPv6
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

// punycodeEncode implements RFC 3492 encoding of one label.
func punycodeEncode(label string) (string, bool) {
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
