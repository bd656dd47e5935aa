package protocol

// Rust type names of the reference's params structs, used by jsonwire.UnmarshalParams in
// "invalid type: null, expected struct <Name>" (observed from codex 0.169.0; the Go
// names differ).

func (InitializeParams) RustName() string        { return "InitializeParams" }
func (ProcessStartParams) RustName() string      { return "WireExecParams" }
func (ProcessReadParams) RustName() string       { return "ReadParams" }
func (ProcessWriteParams) RustName() string      { return "WriteParams" }
func (ProcessSignalParams) RustName() string     { return "SignalParams" }
func (ProcessTerminateParams) RustName() string  { return "TerminateParams" }
func (ExecEnvPolicy) RustName() string           { return "ExecEnvPolicy" }
func (FsReadFileParams) RustName() string        { return "WireFsReadFileParams" }
func (FsWriteFileParams) RustName() string       { return "WireFsWriteFileParams" }
func (FsCreateDirectoryParams) RustName() string { return "WireFsCreateDirectoryParams" }
func (FsGetMetadataParams) RustName() string     { return "WireFsGetMetadataParams" }
func (FsCanonicalizeParams) RustName() string    { return "WireFsCanonicalizeParams" }
func (FsReadDirectoryParams) RustName() string   { return "WireFsReadDirectoryParams" }
func (FsWalkParams) RustName() string            { return "WireFsWalkParams" }
func (FsWalkOptions) RustName() string           { return "WalkOptions" }
func (FsRemoveParams) RustName() string          { return "WireFsRemoveParams" }
func (FsCopyParams) RustName() string            { return "WireFsCopyParams" }
func (FsOpenParams) RustName() string            { return "WireFsOpenParams" }
func (FsReadBlockParams) RustName() string       { return "FsReadBlockParams" }
func (FsWriteBlockParams) RustName() string      { return "FsWriteBlockParams" }
func (FsWatchMissingParams) RustName() string    { return "FsWatchMissingParams" }
func (FsCloseParams) RustName() string           { return "FsCloseParams" }
func (HTTPRequestParams) RustName() string       { return "HttpRequestParams" }
func (HTTPHeader) RustName() string              { return "HttpHeader" }
