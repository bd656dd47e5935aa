package e2e_test

import (
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

// freeAddr is refbin.FreeAddr: a loopback port below the ephemeral range, for processes
// told their address before they start.
func freeAddr(t *testing.T) string { t.Helper(); return refbin.FreeAddr(t) }
