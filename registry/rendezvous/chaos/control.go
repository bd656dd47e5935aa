package chaos

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// ControlHandler returns the on-demand control API, meant for a loopback listener:
//
//	POST /faults   body: one fault spec (ParseFault); fires per its trigger, at once when
//	               it has none. 200 with the normalised spec; 400 for a bad spec.
//	GET  /stats    the counters (Stats) as JSON.
func (p *Proxy) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /faults", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxSpecLength+1))
		if err != nil {
			http.Error(w, "reading the fault spec: "+err.Error(), http.StatusBadRequest)
			return
		}
		f, err := ParseFault(strings.TrimSpace(string(body)))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := p.Inject(f); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, f.String()+"\n")
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(p.Stats())
	})
	return mux
}
