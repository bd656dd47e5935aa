package protocol_test

import "path"

func cleanPath(p string) string { return path.Clean(p) }

// isDriveLike reports whether the first component of a clean absolute path is "X:".
func isDriveLike(p string) bool {
	return len(p) >= 3 && (p[1]|0x20 >= 'a' && p[1]|0x20 <= 'z') && p[2] == ':' && (len(p) == 3 || p[3] == '/')
}
