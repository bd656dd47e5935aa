package registrycmd

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/execlab/executor/telemetry"
)

// Metrics are the registry service's Prometheus metrics (--metrics-listen): the API
// requests by endpoint and status, and the rendezvous Hub's counters. Create them with
// NewMetrics; Start wires them to the service it starts.
type Metrics struct {
	reg prometheus.Registerer
	api *telemetry.Registry
}

// NewMetrics creates the API metrics in reg; the Hub's are added by Start.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	return &Metrics{reg: reg, api: telemetry.NewRegistryMetrics(reg)}
}
