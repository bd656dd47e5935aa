package bench

import (
	"errors"
	"fmt"
	"os/exec"
)

// StatusSkipped marks a row whose prerequisite is absent on this machine (a PostgreSQL
// database, bubblewrap, head(1)): the row is listed with the reason and the run still
// succeeds, since nothing was measured wrong.
const StatusSkipped = "skipped"

// prerequisiteError is returned by a row's Measure when something the row needs is not
// there; measureRow turns it into StatusSkipped instead of a failure.
type prerequisiteError struct{ reason string }

func (e *prerequisiteError) Error() string { return e.reason }

// missing returns a prerequisiteError with the given reason.
func missing(format string, a ...any) error {
	return &prerequisiteError{reason: fmt.Sprintf(format, a...)}
}

// asPrerequisite reports the reason when err says a prerequisite is missing.
func asPrerequisite(err error) (string, bool) {
	var pe *prerequisiteError
	if errors.As(err, &pe) {
		return pe.reason, true
	}
	return "", false
}

// needBwrap is the prerequisite of the sandboxed rows: both executors launch sandboxed
// commands through bubblewrap (the reference looks it up on the request's PATH).
func needBwrap() error {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return missing("bubblewrap (bwrap) is not on PATH: install it (apt-get install bubblewrap) to measure the sandboxed rows")
	}
	return nil
}
