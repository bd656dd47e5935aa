package executor

import "net/url"

// fromNative is a TEMPORARY stand-in until protocol.FromNative lands.
func fromNative(p string) string {
	return (&url.URL{Scheme: "file", Path: p}).String()
}

const httpImplemented = false
