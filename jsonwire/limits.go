package jsonwire

// Wire limits fixed by the reference (spec/jsonrpc.md).
const (
	// MaxValues is the per-message JSON value budget (§1.3): 256 × 1024 values.
	MaxValues = 256 * 1024
	// MaxDepth is serde_json's recursion limit, which the reference inherits: the
	// MaxDepth-th nested array or object is rejected with "recursion limit exceeded"
	// (observed from codex 0.169.0: 127 nested containers pass, 128 fail).
	MaxDepth = 128
)

// Implementation constants (our choice).
const (
	// linearKeys is the object size (keys) up to which the decoder's duplicate-key check
	// compares linearly before switching to a set; a tuning knob, not a limit.
	linearKeys = 16
)
