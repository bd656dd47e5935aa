// Package sandboxtest gives tests of the sandbox and of its users (executor/process,
// executor/fs) a Launcher for a given backend, probing the host once per backend.
//
// When the host cannot provide the backend, Require and Launcher skip the test locally
// and fail it when CI=true (spec/sandbox.md §7.3: in CI bubblewrap is installed, so a
// missing backend is a failure, never silent lost coverage). Only tests import it.
package sandboxtest
