package envconfig

// The hostname member, as codex-config's host_name computes it (PROBED on 0.171.0 in a
// UTS namespace and with a private /etc/hosts): the kernel host name trimmed, without
// a trailing dot, lower-cased; replaced by the canonical name the resolver gives for
// it (getaddrinfo's AI_CANONNAME: /etc/hosts first, then DNS) when that name is
// DNS-qualified (has a dot). Computed once per process, as the reference caches it.

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
)

// hostsFile is the static host table consulted before DNS.
const hostsFile = "/etc/hosts"

var processHostName = sync.OnceValues(func() (string, error) {
	k, err := os.Hostname()
	if err != nil {
		return "", err
	}
	name := normalizeHostName(k)
	if name == "" {
		return "", errors.New("empty host name")
	}
	if fqdn := canonicalHostName(name); fqdn != "" {
		return fqdn, nil
	}
	return name, nil
})

func normalizeHostName(h string) string {
	return strings.ToLower(strings.TrimRight(strings.TrimSpace(h), "."))
}

// canonicalHostName returns the DNS-qualified canonical name of name, or "".
func canonicalHostName(name string) string {
	if c, found := canonicalFromHosts(hostsFile, name); found {
		return qualified(c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hostLookupTimeout)
	defer cancel()
	c, err := net.DefaultResolver.LookupCNAME(ctx, name)
	if err != nil {
		return ""
	}
	return qualified(c)
}

func qualified(c string) string {
	if c = normalizeHostName(c); strings.Contains(c, ".") {
		return c
	}
	return ""
}

// canonicalFromHosts returns the first name of the first hosts line naming name
// (compared case-insensitively), as the C library reports it as the canonical name.
func canonicalFromHosts(path, name string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		for _, n := range fields[1:] {
			if strings.EqualFold(strings.TrimRight(n, "."), name) {
				return fields[1], true
			}
		}
	}
	return "", false
}
