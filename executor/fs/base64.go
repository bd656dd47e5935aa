package fs

import (
	"encoding/base64"
	"strconv"
)

// decodeBase64 decodes standard padded base64 and returns the Rust base64 crate's error
// text on failure ("" on success): `Invalid symbol <byte>, offset <n>.`,
// `Invalid padding`, `Invalid last symbol <byte>, offset <n>.`, `Invalid input length: <n>`.
// TODO: switch to jsonrpc.DecodeBase64 when it lands.
func decodeBase64(s string) ([]byte, string) {
	data, err := base64.StdEncoding.Strict().DecodeString(s)
	if err == nil {
		return data, ""
	}
	isSym := func(c byte) bool {
		return c < 0x80 && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/')
	}
	// Position of the first '=' (padding start).
	pad := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			pad = i
			break
		}
	}
	for i := 0; i < pad; i++ {
		if !isSym(s[i]) {
			return nil, "Invalid symbol " + strconv.Itoa(int(s[i])) + ", offset " + strconv.Itoa(i) + "."
		}
	}
	for i := pad; i < len(s); i++ {
		if s[i] != '=' {
			if isSym(s[i]) {
				return nil, "Invalid symbol " + strconv.Itoa(int('=')) + ", offset " + strconv.Itoa(pad) + "."
			}
			return nil, "Invalid symbol " + strconv.Itoa(int(s[i])) + ", offset " + strconv.Itoa(i) + "."
		}
	}
	if pad%4 == 1 {
		return nil, "Invalid input length: " + strconv.Itoa(pad)
	}
	if len(s)%4 != 0 || (pad%4 == 0 && pad != len(s)) {
		return nil, "Invalid padding"
	}
	// Non-zero trailing bits.
	last := pad - 1
	return nil, "Invalid last symbol " + strconv.Itoa(int(s[last])) + ", offset " + strconv.Itoa(last) + "."
}
