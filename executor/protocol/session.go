package protocol

// InitializeParams are the params of `initialize` (spec/jsonrpc.md §2.1).
type InitializeParams struct {
	ClientName      string  `json:"clientName"`
	ResumeSessionID *string `json:"resumeSessionId,omitempty"`
}

// InitializeResult is the result of `initialize`. A resume returns a result identical
// to the original one.
type InitializeResult struct {
	SessionID       string           `json:"sessionId"`
	EnvironmentInfo *EnvironmentInfo `json:"environmentInfo"`
}
