package process

import (
	"strings"
	"testing"
)

// FuzzGuardLines: any bytes on the guard's pipe leave a set of positive group counts with
// positive ids and at most one notice, whose URL is http(s) without spaces.
func FuzzGuardLines(f *testing.F) {
	f.Add([]byte("+12\n+13\n-12\n"))
	f.Add([]byte("Nhttp://127.0.0.1:1/cloud/environment/e/executor-exited eyJ0b2tlbiI6IngifQ==\n+5\n"))
	f.Add([]byte("N https://x\nNhttp://a b\n-0\n+-3\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		groups := map[int]int{}
		n := readGuardLines(strings.NewReader(string(in)), groups)
		for pgid, c := range groups {
			if pgid <= 0 || c <= 0 {
				t.Fatalf("group %d with count %d", pgid, c)
			}
		}
		if n != nil && (!(strings.HasPrefix(n.url, "http://") || strings.HasPrefix(n.url, "https://")) || strings.ContainsAny(n.url, " \n")) {
			t.Fatalf("notice url %q", n.url)
		}
	})
}
