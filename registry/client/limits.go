package client

import (
	"time"

	"github.com/execlab/executor/registry/api"
)

// Wire constants (reference behaviour, spec/registry-auth.md).
const (
	// RequestTimeout bounds each register and validate call (§8.3: 10 s).
	RequestTimeout = api.RequestTimeout

	// RetryInitial and RetryMax are the register retry schedule (§8.1): base 500 ms doubling,
	// capped at 5 s, each delay uniform in [base, 1.5·base].
	RetryInitial = 500 * time.Millisecond
	RetryMax     = 5 * time.Second

	// headerAccountID carries the ChatGPT account (§11.1).
	headerAccountID = "chatgpt-account-id"
	// headerFedRAMP marks FedRAMP ChatGPT accounts (§11.1 row 4).
	headerFedRAMP = "x-openai-fedramp"

	// MaxCredentialFrameLine bounds one --executor-credential-stdin frame line, its "\n"
	// included (bytes; observed from codex 0.169.0: a 16384-byte line is accepted, 16385 is
	// "exceeds the size limit", also before any "\n" arrives). §11.1 row 1b.
	MaxCredentialFrameLine = 16 << 10

	// InitialCredentialTimeout bounds the wait for the first --executor-credential-stdin
	// frame (observed from codex 0.169.0: "timed out waiting for the initial exec-server
	// executor credential" 30.0 s after start with stdin open and silent). §11.1 row 1b.
	InitialCredentialTimeout = 30 * time.Second
)
