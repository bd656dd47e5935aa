package executor

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/jsonwire"
)

// Observer receives the server's counts, for metrics: requests, back-pressure (jsonrpc)
// and process events (process). cmd/executor wires Prometheus to it; no executor package
// imports a metrics library. Every value passed is bounded: a method outside the method
// table is reported as "other", and no process, session or request id is ever passed.
// Implementations must be safe for concurrent use and cheap (they run on every request).
type Observer interface {
	jsonrpc.Observer
	process.Observer
	// RequestHandled is called once per request after its handler returned: method is a
	// method of the table or "other"; code is "0" on success, the JSON-RPC error code
	// ("-32602"), or "closed" when the request ended the connection.
	RequestHandled(method, code string, d time.Duration)
	// ConnOpened and ConnClosed bracket each ServeConn that got past the closed check.
	ConnOpened()
	ConnClosed()
}

// RequestSpan is the optional tracing half of an Observer: when the Observer implements
// it, StartRequest is called before each request's handler with the method label, and
// the func it returns after, with the code. The returned ctx is the handler's.
type RequestSpan interface {
	StartRequest(ctx context.Context, method string) (context.Context, func(code string))
}

// methodLabel bounds the method label to the method table.
func methodLabel(method string) string {
	if _, ok := methods[method]; ok {
		return method
	}
	return "other"
}

// codeLabel is RequestHandled's code for a handler's error.
func codeLabel(err error) string {
	if err == nil {
		return "0"
	}
	if errors.Is(err, jsonrpc.ErrClose) {
		return "closed"
	}
	var rpcErr *jsonwire.Error
	if errors.As(err, &rpcErr) {
		return strconv.Itoa(rpcErr.Code)
	}
	return strconv.Itoa(jsonwire.CodeInternal)
}

// nopObserver is the Observer of a nil Options.Observer.
type nopObserver struct{}

func (nopObserver) Backpressure(string, time.Duration)           {}
func (nopObserver) ProcessStarted()                              {}
func (nopObserver) ProcessExited(process.ExitClass)              {}
func (nopObserver) OutputBytes(int)                              {}
func (nopObserver) RequestHandled(string, string, time.Duration) {}
func (nopObserver) ConnOpened()                                  {}
func (nopObserver) ConnClosed()                                  {}

// Methods returns the method table's names, sorted: the values RequestHandled passes
// besides "other" (metrics pre-create their series from it).
func Methods() []string {
	names := make([]string, 0, len(methods))
	for name := range methods {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
