// Package observability (Linux) tests the metrics of the built binary end to end: `executor
// registry serve` and `executor remote` with --metrics-listen, driven by the Go harness
// SDK; every scrape passes `promtool check metrics`; a real Prometheus server scrapes both
// and a PromQL query shows the counters moved; the series count does not grow with
// streams or processes. Test-only; nothing imports it.
package observability
