package envconfig

import (
	"path/filepath"
	"testing"
)

func TestHostName_NormalizedAndCanonical(t *testing.T) {
	for in, want := range map[string]string{"My-Host.Example.": "my-host.example", " Spaced ": "spaced", "vm": "vm", "...": ""} {
		if got := normalizeHostName(in); got != want {
			t.Errorf("normalizeHostName(%q) = %q, want %q", in, got, want)
		}
	}
	hosts := filepath.Join(t.TempDir(), "hosts")
	writeFile(t, hosts, "127.0.0.1 localhost\n# 127.0.1.1 vm.commented\n127.0.1.1 VM.Example.COM. vm\n127.0.1.2 short other\n")
	cases := []struct {
		name, want string
		found      bool
	}{{"vm", "VM.Example.COM.", true}, {"other", "short", true}, {"nope", "", false}}
	for _, c := range cases {
		got, found := canonicalFromHosts(hosts, c.name)
		if got != c.want || found != c.found {
			t.Errorf("canonicalFromHosts(%q) = %q, %v; want %q, %v", c.name, got, found, c.want, c.found)
		}
	}
	if got := qualified("VM.Example.COM."); got != "vm.example.com" {
		t.Errorf("qualified = %q", got)
	}
	if got := qualified("short"); got != "" {
		t.Errorf("qualified(short) = %q, want none", got)
	}
}

func TestPasswdHome(t *testing.T) {
	p := filepath.Join(t.TempDir(), "passwd")
	writeFile(t, p, "root:x:0:0:root:/root:/bin/bash\nu:x:1000:1000::/home/u:/bin/sh\nbad line\n")
	if got := passwdHome(p, 1000); got != "/home/u" {
		t.Errorf("passwdHome(1000) = %q", got)
	}
	if got := passwdHome(p, 5); got != "" {
		t.Errorf("passwdHome(5) = %q, want none", got)
	}
}
