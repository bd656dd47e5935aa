package executor

import "errors"

// ErrServerClosed is returned by ServeConn after Close.
var ErrServerClosed = errors.New("executor: server closed")
