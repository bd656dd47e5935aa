package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// otlpSink is an OTLP/HTTP trace receiver that accepts every export and discards it: the
// "on" executor's exporter does all its work (batching, protobuf encoding, the HTTP
// request) and the sink's own cost is in the bench process, not in the figure. Its
// serving goroutine is owned by the sink; close waits for it.
type otlpSink struct {
	url  string
	srv  *http.Server
	done chan struct{}
	n    atomic.Int64 // export requests received
}

func startOTLPSink() (*otlpSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the OTLP sink: %w", err)
	}
	s := &otlpSink{url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.n.Add(1)
		// An empty ExportTraceServiceResponse is zero protobuf bytes: full success.
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go func() { // routineServe: ends when close shuts the server down
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *otlpSink) requests() int { return int(s.n.Load()) }

func (s *otlpSink) close() {
	_ = s.srv.Close()
	<-s.done
}

// scrapeClient is the scraper's HTTP client: no keep-alive between scrapes, as a
// Prometheus server scraping every 15 s or more would mostly reconnect.
var scrapeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// scrapeOnce GETs url within timeout and reads the whole body.
func scrapeOnce(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := scrapeClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// WriteOverheadTable writes the human-readable overhead report.
func WriteOverheadTable(w io.Writer, r *OverheadReport) error {
	fmt.Fprintf(w, "executor bench --telemetry-overhead: %s, %d alternating on/off rounds per row%s, took %s\n",
		r.Started.UTC().Format("2006-01-02 15:04:05 UTC"), r.Rounds, map[bool]string{true: " (--quick sizes)", false: ""}[r.Quick],
		r.Duration.Round(100*time.Millisecond))
	fmt.Fprintf(w, "machine: %s\n", r.Machine)
	fmt.Fprintf(w, "ours:    %s\n", r.Ours)
	fmt.Fprintf(w, "on = --metrics-listen scraped every %s + every span exported over OTLP/HTTP; off = neither\n", r.ScrapeInterval)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "row\tunit\toff median [min–max]\ton median [min–max]\twall overhead\tCPU unit\tCPU off\tCPU on\tCPU overhead (sum)\t(paired)\tscrapes\texports")
	for _, res := range r.Results {
		if res.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\tFAILED: %s\t\t\t\t\t\t\t\t%d\t%d\n", res.Row, res.Unit, res.Error, res.Scrapes, res.Exports)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", res.Row, res.Unit, fmtStats(res.Off), fmtStats(res.On),
			fmtPercent(res.WallOverhead), res.CPUUnit, fmtStats(res.CPUOff), fmtStats(res.CPUOn), fmtPercent(res.CPUOverhead),
			fmtPercent(res.CPUPairedOverhead), res.Scrapes, res.Exports)
	}
	return tw.Flush()
}

// fmtPercent prints an overhead fraction as a signed percentage ("+1.8 %").
func fmtPercent(v float64) string { return fmt.Sprintf("%+.1f %%", 100*v) }

// WriteOverheadJSON writes the results as JSON.
func WriteOverheadJSON(w io.Writer, r *OverheadReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Started string           `json:"started"`
		Machine string           `json:"machine"`
		Rounds  int              `json:"rounds"`
		Quick   bool             `json:"quick"`
		Rows    []OverheadResult `json:"rows"`
	}{r.Started.UTC().Format(time.RFC3339), r.Machine, r.Rounds, r.Quick, r.Results})
}
