package telemetry_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/telemetry"
)

// TestQueueGauges: the queue gauges report what TrackQueues' func and the tracked muxes
// say at scrape time (summed over muxes, gone once untracked); the back-pressure
// histogram has every queue's series from the start and counts the new queues' waits.
func TestQueueGauges(t *testing.T) {
	reg := telemetry.NewRegistry()
	e := telemetry.NewExecutor(reg)
	url := "http://" + serveMetrics(t, ":0", reg) + "/metrics"

	text := get(t, url)
	for _, want := range []string{
		"executor_rpc_outbound_queue_bytes 0", "executor_relay_outbound_queue_frames 0", "executor_processes_blocked_at_bound 0",
		`executor_backpressure_wait_seconds_count{queue="output_window"} 0`,
		`executor_backpressure_wait_seconds_count{queue="output_bound"} 0`,
		`executor_backpressure_wait_seconds_count{queue="relay_outbound"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape before tracking lacks %q", want)
		}
	}

	e.TrackQueues(func() executor.QueueStats {
		return executor.QueueStats{
			RPC:     jsonrpc.QueueStats{OutboundBytes: 11, OutboundMessages: 2, InboundBytes: 13},
			Process: process.QueueStats{StdinBytes: 17, RetainedBytes: 19, UnackedBytes: 23, BlockedAtBound: 3},
		}
	})
	untrackA := e.TrackMux(func() mux.Stats { return mux.Stats{Outbound: 5} })
	untrackB := e.TrackMux(func() mux.Stats { return mux.Stats{Outbound: 7} })
	e.Backpressure(process.QueueOutputBound, 2*time.Second)
	e.Backpressure(mux.QueueOutbound, time.Millisecond)
	text = get(t, url)
	for _, want := range []string{
		"executor_rpc_outbound_queue_bytes 11", "executor_rpc_outbound_queue_messages 2", "executor_rpc_inbound_queue_bytes 13",
		"executor_process_stdin_queue_bytes 17", "executor_process_retained_output_bytes 19",
		"executor_process_unacked_output_bytes 23", "executor_processes_blocked_at_bound 3",
		"executor_relay_outbound_queue_frames 12",
		`executor_backpressure_wait_seconds_count{queue="output_bound"} 1`,
		`executor_backpressure_wait_seconds_sum{queue="output_bound"} 2`,
		`executor_backpressure_wait_seconds_count{queue="relay_outbound"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	untrackA()
	if text := get(t, url); !strings.Contains(text, "executor_relay_outbound_queue_frames 7") {
		t.Errorf("after untracking one mux: scrape lacks executor_relay_outbound_queue_frames 7")
	}
	untrackB()
	if text := get(t, url); !strings.Contains(text, "executor_relay_outbound_queue_frames 0") {
		t.Errorf("after untracking both muxes: scrape lacks executor_relay_outbound_queue_frames 0")
	}
}

// TestRegistryNodeMetrics: location changes and lease renewals are counted by reason and
// outcome (every series pre-created at zero), and the lease gauge follows Ready.
func TestRegistryNodeMetrics(t *testing.T) {
	reg := telemetry.NewRegistry()
	r := telemetry.NewRegistryMetrics(reg)
	var lost atomic.Bool
	telemetry.RegisterNode(reg, func() bool { return !lost.Load() })
	url := "http://" + serveMetrics(t, ":0", reg) + "/metrics"
	r.LocationChanged(server.LocationAttached)
	r.LocationChanged(server.LocationMovedAway)
	r.LocationChanged(server.LocationMovedAway)
	r.LeaseRenewal(server.LeaseRenewed)
	r.LeaseRenewal(server.LeaseLost)
	text := get(t, url)
	for _, want := range []string{
		`registry_location_changes_total{reason="attached"} 1`, `registry_location_changes_total{reason="moved_away"} 2`,
		`registry_location_changes_total{reason="stale_refused"} 0`,
		`registry_node_lease_renewals_total{outcome="ok"} 1`, `registry_node_lease_renewals_total{outcome="lost"} 1`,
		`registry_node_lease_renewals_total{outcome="error"} 0`, "registry_node_lease_held 1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	lost.Store(true)
	if text := get(t, url); !strings.Contains(text, "registry_node_lease_held 0") {
		t.Error("scrape with the lease lost lacks registry_node_lease_held 0")
	}
}
