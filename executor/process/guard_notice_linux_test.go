//go:build linux

package process_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/execlab/executor/executor/process"
)

// TestGuard_PostsExitNoticeAfterTheKill: once the executor's end of the pipe closes, the
// guard kills the tracked groups and then POSTs the last exit notice set (the latest
// registration's), once, with its JSON body; a notice replaced before the exit is not
// sent. With no group tracked it still posts.
func TestGuard_PostsExitNoticeAfterTheKill(t *testing.T) {
	for _, withGroup := range []bool{true, false} {
		name := "no group"
		if withGroup {
			name = "group"
		}
		t.Run(name, func(t *testing.T) {
			type post struct {
				path, body, ctype string
				alive             bool
			}
			posts := make(chan post, 4)
			marker := newMarker(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				posts <- post{r.URL.Path, string(b), r.Header.Get("Content-Type"), len(markedPids(marker)) > 0}
				_, _ = io.WriteString(w, "{}")
			}))
			defer srv.Close()
			g := newGuard(t)
			defer g.Close()
			m := newManager(t, &process.Options{Guard: g})
			if withGroup {
				p := startParams("p", tmpURI(t), "sh", "-c", "sleep 30 & echo ready; wait")
				setMarker(p, marker)
				mustStart(t, m, p)
				waitOutput(t, m, "p", "ready")
			}
			g.SetExitNotice(srv.URL+"/old", []byte(`{"n":1}`))
			g.SetExitNotice(srv.URL+"/cloud/environment/e/executor-exited", []byte(`{"n":2}`))
			g.SetExitNotice("ftp://ignored", []byte(`{}`)) // not http(s): dropped by the guard
			if err := g.Close(); err != nil {
				t.Fatalf("closing the guard: %v", err)
			}
			select {
			case p := <-posts:
				if p.path != "/cloud/environment/e/executor-exited" || p.body != `{"n":2}` || p.ctype != "application/json" {
					t.Errorf("notice: got %s %q (%s), want the last one set: /cloud/environment/e/executor-exited {\"n\":2} (application/json)", p.path, p.body, p.ctype)
				}
				if p.alive {
					t.Errorf("notice posted while a process of the tracked group was still alive (want it after the kill)")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no exit notice within 5 s of the guard's pipe closing")
			}
			select {
			case p := <-posts:
				t.Errorf("a second notice was posted: %s", p.path)
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}
