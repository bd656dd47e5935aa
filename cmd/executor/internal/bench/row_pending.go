package bench

// Rows of issue 7 that wait for their subsystems. Each moves to its own row_<name>.go,
// with its unit, goal and Measure function, when its subsystem lands; until then it is
// listed as "not yet available" with no unit, goal or numbers.
func init() {
	for _, r := range []Row{
		{Name: "readblock_local", Describe: "fs/open + fs/readBlock of a large file over local ws (needs fs/*)"},
		{Name: "walk_local", Describe: "fs/walk of a large tree over local ws (needs fs/walk)"},
		{Name: "http_stream_local", Describe: "http/request streamResponse body deltas over local ws (needs http/request)"},
		{Name: "handshakes", Describe: "relay + Noise handshake to first JSON-RPC response (needs relay, noise)"},
		{Name: "relay_stream", Describe: "process output through the rendezvous relay (needs relay)"},
		{Name: "oneshot_remote", Describe: "oneshot_local through the rendezvous relay (needs relay)"},
		{Name: "idle_stream_memory", Describe: "memory per idle relay stream (needs relay)"},
		{Name: "rendezvous_idle_memory", Describe: "idle memory of the rendezvous service (needs registry/rendezvous)"},
		{Name: "sandboxed_oneshot", Describe: "oneshot_local under a restricted sandbox (needs sandbox)"},
	} {
		register(r)
	}
}
