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
)
