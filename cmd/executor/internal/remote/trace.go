package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Traceparent returns a func producing a W3C traceparent for each outbound request, as a
// child of parent (the process's TRACEPARENT, "00-<32 hex trace id>-<16 hex span id>-<2 hex
// flags>"): same trace id and flags, fresh span id. An empty or malformed parent yields nil
// (no trace headers, as the reference with tracing off).
func Traceparent(parent string) func(context.Context) string {
	parts := strings.Split(strings.TrimSpace(parent), "-")
	if len(parts) != 4 || parts[0] != "00" || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 ||
		!isHex(parts[1]) || !isHex(parts[2]) || !isHex(parts[3]) || parts[1] == strings.Repeat("0", 32) {
		return nil
	}
	traceID, flags := parts[1], parts[3]
	return func(context.Context) string {
		var span [8]byte
		_, _ = rand.Read(span[:])
		return "00-" + traceID + "-" + hex.EncodeToString(span[:]) + "-" + flags
	}
}

// withSpanTraceparent returns a traceparent func preferring span(ctx) (the current span's
// context, set only with tracing on) and falling back to fallback; nil when both are nil.
func withSpanTraceparent(span, fallback func(context.Context) string) func(context.Context) string {
	if span == nil {
		return fallback
	}
	return func(ctx context.Context) string {
		if tp := span(ctx); tp != "" {
			return tp
		}
		if fallback != nil {
			return fallback(ctx)
		}
		return ""
	}
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// newRequestID returns "req_" + 32 lowercase hex digits (spec/registry-auth.md §8.2).
func newRequestID() string {
	var b [requestIDHexLen / 2]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}
