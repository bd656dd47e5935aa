package remote

import (
	"context"
	"strings"
	"testing"
)

func TestTraceparent(t *testing.T) {
	parent := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tp := Traceparent(parent)
	if tp == nil {
		t.Fatal("a valid TRACEPARENT yields no func")
	}
	a, b := tp(context.Background()), tp(context.Background())
	if !strings.HasPrefix(a, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || !strings.HasSuffix(a, "-01") || a == b || len(a) != len(parent) {
		t.Errorf("children %q, %q: want the trace id and flags, fresh span ids", a, b)
	}
	for _, bad := range []string{"", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "01-x-y-z", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"} {
		if Traceparent(bad) != nil {
			t.Errorf("Traceparent(%q) is not nil", bad)
		}
	}
}

// TestWithSpanTraceparent: the current span's traceparent wins; without one the
// TRACEPARENT-derived fallback is used; nil span func keeps the fallback as is.
func TestWithSpanTraceparent(t *testing.T) {
	type key struct{}
	span := func(ctx context.Context) string { s, _ := ctx.Value(key{}).(string); return s }
	fallback := func(context.Context) string { return "fallback" }
	f := withSpanTraceparent(span, fallback)
	if got := f(context.WithValue(context.Background(), key{}, "span")); got != "span" {
		t.Errorf("with a span: %q", got)
	}
	if got := f(context.Background()); got != "fallback" {
		t.Errorf("without a span: %q", got)
	}
	if got := withSpanTraceparent(span, nil)(context.Background()); got != "" {
		t.Errorf("without a span or fallback: %q", got)
	}
	if withSpanTraceparent(nil, nil) != nil {
		t.Error("no span func and no fallback: want nil (no header)")
	}
}
