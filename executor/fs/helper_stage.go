package fs

// Helper side of the sandboxed filesystem helper (spec/sandbox.md §4): this binary
// re-entered as `<exe> --codex-run-as-fs-helper` inside the sandbox. It reads one
// request from stdin to EOF, runs it with the same in-process implementation as an
// unsandboxed request (so defaults and error texts are identical), writes one response
// plus "\n" to stdout and exits 0. See helper.go for the format.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/reexec"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
)

// init registers the helper as a re-entry point (internal/reexec): argv[1] ==
// sandbox.FSHelperFlag answers one request on stdin/stdout, and the exit code is 0
// unless stdout could not be written or stdin not read. The point is InProcess: the
// sandbox inner stage runs it itself, confined, instead of starting this binary again.
func init() {
	reexec.Register(reexec.Point{Args: []string{sandbox.FSHelperFlag}, InProcess: true,
		Run: func([]string) int { return runHelperStage(os.Stdin, os.Stdout) }})
}

func runHelperStage(stdin io.Reader, stdout io.Writer) int {
	in, err := io.ReadAll(io.LimitReader(stdin, maxHelperRequest+1))
	if err != nil || len(in) > maxHelperRequest {
		os.Stderr.WriteString("reading fs sandbox helper request failed\n")
		return 1
	}
	var req struct {
		Method    string          `json:"method"`
		Params    json.RawMessage `json:"params"`
		DenyGlobs []string        `json:"denyGlobs"`
	}
	var resp helperResponse
	if err := json.Unmarshal(in, &req); err != nil {
		resp.Error = jsonwire.InvalidRequest("failed to encode or decode fs sandbox helper message: %s", err.Error())
	} else if err := checkDenyGlobs(req.DenyGlobs, req.Method, req.Params); err != nil {
		resp.Error = asRPCError(err)
	} else if result, err := helperDispatch(context.Background(), req.Method, req.Params, req.DenyGlobs); err != nil {
		resp.Error = asRPCError(err)
	} else if resp.OK, err = json.Marshal(result); err != nil {
		resp.Error = jsonwire.Internal("failed to encode or decode fs sandbox helper message: %s", err.Error())
	}
	out, err := json.Marshal(&resp)
	if err != nil {
		return 1
	}
	if _, err := stdout.Write(append(out, '\n')); err != nil {
		return 1
	}
	return 0
}

func asRPCError(err error) *jsonwire.Error {
	if e, ok := rpcError(err).(*jsonwire.Error); ok {
		return e
	}
	return jsonwire.Internal("%s", err.Error())
}

// helperOpenParams and helperOpenResult are the helper-only "fs/open" operation: read
// a whole regular file into a snapshot of at most MaxBytes bytes.
type helperOpenParams struct {
	Path     protocol.PathURI `json:"path"`
	MaxBytes int64            `json:"maxBytes"`
}

type helperOpenResult struct {
	DataBase64 string `json:"dataBase64"`
	// Size is the file size fstat reported after the read; the executor checks that
	// the decoded data has exactly this length.
	Size int64 `json:"size"`
}

// helperDispatch decodes params for method and runs it in-process (no sandbox: the
// helper is already inside it). Methods registered with RegisterHelperMethod get the
// policy's deny globs to re-check their own reads.
func helperDispatch(ctx context.Context, method string, raw json.RawMessage, denyGlobs []string) (any, error) {
	s := New(nil)
	local := map[string]func(context.Context, json.RawMessage) (any, error){
		protocol.MethodFsReadFile:        helperRun(s.ReadFile),
		protocol.MethodFsWriteFile:       helperRun(s.WriteFile),
		protocol.MethodFsCreateDirectory: helperRun(s.CreateDirectory),
		protocol.MethodFsGetMetadata:     helperRun(s.GetMetadata),
		protocol.MethodFsCanonicalize:    helperRun(s.Canonicalize),
		protocol.MethodFsReadDirectory:   helperRun(s.ReadDirectory),
		protocol.MethodFsWalk:            helperRun(s.Walk),
		protocol.MethodFsRemove:          helperRun(s.Remove),
		protocol.MethodFsCopy:            helperRun(s.Copy),
		protocol.MethodFsOpen:            helperRun(helperOpen),
		helperMethodOpenReplace:          helperRun(helperOpenReplace),
	}
	if run := local[method]; run != nil {
		return run(ctx, raw)
	}
	if m := registeredHelperMethod(method); m != nil {
		return m(ctx, raw, denyGlobs)
	}
	return nil, jsonwire.InvalidRequest("unknown fs sandbox helper method %q", method)
}

// helperRun binds f to raw params: they are decoded as P, then f runs.
func helperRun[P, R any](f func(context.Context, *P) (*R, error)) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if err := jsonwire.UnmarshalParams(raw, &p); err != nil {
			return nil, err
		}
		return f(ctx, &p)
	}
}

// helperOpen reads a snapshot for a sandboxed fs/open: a FIFO or other non-regular file
// fails at once with the unsandboxed text; a file larger than MaxBytes is refused; the
// bytes read must match the size fstat reports afterwards.
func helperOpen(_ context.Context, p *helperOpenParams) (*helperOpenResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	f, err := openRegular(native)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, rpcError(err)
	}
	if st.Size() > p.MaxBytes {
		return nil, errSnapshotBudget
	}
	data, err := io.ReadAll(io.LimitReader(f, p.MaxBytes+1))
	if err != nil {
		return nil, rpcError(err)
	}
	if int64(len(data)) > p.MaxBytes {
		return nil, errSnapshotBudget
	}
	if st, err = f.Stat(); err != nil {
		return nil, rpcError(err)
	}
	if st.Size() != int64(len(data)) {
		return nil, errSnapshotChanged
	}
	return &helperOpenResult{DataBase64: base64.StdEncoding.EncodeToString(data), Size: st.Size()}, nil
}
