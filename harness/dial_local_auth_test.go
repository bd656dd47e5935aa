package harness_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/harness"
)

// TestDialLocal_AuthBearerToken: the option is sent as `authorization: Bearer <token>`
// (trimmed), nothing is sent without it, and a 401 surfaces as an error naming the
// status but never the token.
func TestDialLocal_AuthBearerToken(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("invalid websocket bearer token"))
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tt := range []struct{ opt, want string }{
		{" tok-secret-1\n", "Bearer tok-secret-1"},
		{"", ""},
	} {
		_, err := harness.DialLocal(ctx, url, &harness.Options{AuthBearerToken: tt.opt})
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("DialLocal: %v, want an error naming 401", err)
		}
		if strings.Contains(err.Error(), "tok-secret") {
			t.Errorf("error leaks the token: %v", err)
		}
		if h := <-got; h != tt.want {
			t.Errorf("authorization %q, want %q", h, tt.want)
		}
	}
}
