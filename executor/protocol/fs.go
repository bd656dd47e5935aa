package protocol

import (
	"strconv"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// Filesystem method params and results (spec/jsonrpc.md §3.6). Every path is a PathURI.
// Sandbox is the decoded FileSystemSandboxContext (§6, spec/sandbox.md §1.2): nil (absent or
// null) = none; the fs package decides whether it needs the sandboxed helper.

// FsReadFileParams are the params of fs/readFile.
type FsReadFileParams struct {
	Path           PathURI         `json:"path"`
	FollowSymlinks *bool           `json:"followSymlinks"` // nil = true
	MaxBytes       *uint64         `json:"maxBytes"`       // honoured when present (documented deviation)
	Sandbox        *policy.Context `json:"sandbox,omitempty"`
}

// FsReadFileResult is the result of fs/readFile; DataBase64 is standard padded base64.
type FsReadFileResult struct {
	DataBase64 jsonwire.Bytes `json:"dataBase64"`
}

// FsWriteFileParams are the params of fs/writeFile. DataBase64 is decoded by the handler
// because a bad value is -32600, not a decode error.
type FsWriteFileParams struct {
	Path           PathURI         `json:"path"`
	DataBase64     string          `json:"dataBase64"`
	FollowSymlinks *bool           `json:"followSymlinks"`
	Sandbox        *policy.Context `json:"sandbox,omitempty"`
}

// FsCreateDirectoryParams are the params of fs/createDirectory.
type FsCreateDirectoryParams struct {
	Path           PathURI         `json:"path"`
	Recursive      *bool           `json:"recursive"` // nil = true
	FollowSymlinks *bool           `json:"followSymlinks"`
	Sandbox        *policy.Context `json:"sandbox,omitempty"`
}

// FsGetMetadataParams are the params of fs/getMetadata.
type FsGetMetadataParams struct {
	Path           PathURI         `json:"path"`
	FollowSymlinks *bool           `json:"followSymlinks"`
	Sandbox        *policy.Context `json:"sandbox,omitempty"`
}

// FsGetMetadataResult is the result of fs/getMetadata. Times are ms since the epoch;
// CreatedAtMs is 0 when no birth time is reported.
type FsGetMetadataResult struct {
	IsDirectory  bool   `json:"isDirectory"`
	IsFile       bool   `json:"isFile"`
	IsSymlink    bool   `json:"isSymlink"`
	Size         uint64 `json:"size"`
	CreatedAtMs  int64  `json:"createdAtMs"`
	ModifiedAtMs int64  `json:"modifiedAtMs"`
}

// FsCanonicalizeParams are the params of fs/canonicalize.
type FsCanonicalizeParams struct {
	Path    PathURI         `json:"path"`
	Sandbox *policy.Context `json:"sandbox,omitempty"`
}

// FsCanonicalizeResult is the result of fs/canonicalize.
type FsCanonicalizeResult struct {
	Path PathURI `json:"path"`
}

// FsReadDirectoryParams are the params of fs/readDirectory.
type FsReadDirectoryParams struct {
	Path    PathURI         `json:"path"`
	Sandbox *policy.Context `json:"sandbox,omitempty"`
}

// FsDirectoryEntry is one fs/readDirectory entry; FileName is lossy UTF-8.
type FsDirectoryEntry struct {
	FileName    string `json:"fileName"`
	IsDirectory bool   `json:"isDirectory"`
	IsFile      bool   `json:"isFile"`
}

// FsReadDirectoryResult is the result of fs/readDirectory.
type FsReadDirectoryResult struct {
	Entries []FsDirectoryEntry `json:"entries"`
}

// FsWalkOptions are the options of fs/walk (all usize limits required).
type FsWalkOptions struct {
	MaxDepth                uint64 `json:"maxDepth"`
	MaxDirectories          uint64 `json:"maxDirectories"`
	MaxEntries              uint64 `json:"maxEntries"`
	FollowDirectorySymlinks bool   `json:"followDirectorySymlinks"`
	PruneHiddenDirectories  bool   `json:"pruneHiddenDirectories,omitempty"`
}

// FsWalkParams are the params of fs/walk.
type FsWalkParams struct {
	Path    PathURI         `json:"path"`
	Options FsWalkOptions   `json:"options"`
	Sandbox *policy.Context `json:"sandbox,omitempty"`
}

// Walk entry kinds.
const (
	FsWalkKindDirectory = "directory"
	FsWalkKindFile      = "file"
)

// FsWalkEntry is one fs/walk entry; Kind is FsWalkKindDirectory or FsWalkKindFile.
type FsWalkEntry struct {
	Path PathURI `json:"path"`
	Kind string  `json:"kind"`
}

// FsWalkError is a per-entry fs/walk failure.
type FsWalkError struct {
	Path    PathURI `json:"path"`
	Message string  `json:"message"`
}

// FsWalkResult is the result of fs/walk.
type FsWalkResult struct {
	Entries   []FsWalkEntry `json:"entries"`
	Errors    []FsWalkError `json:"errors"`
	Truncated bool          `json:"truncated"`
}

// FsRemoveParams are the params of fs/remove.
type FsRemoveParams struct {
	Path           PathURI         `json:"path"`
	Recursive      *bool           `json:"recursive"` // nil = true
	Force          *bool           `json:"force"`     // nil = true
	FollowSymlinks *bool           `json:"followSymlinks"`
	Sandbox        *policy.Context `json:"sandbox,omitempty"`
}

// FsCopyParams are the params of fs/copy.
type FsCopyParams struct {
	SourcePath      PathURI         `json:"sourcePath"`
	DestinationPath PathURI         `json:"destinationPath"`
	Recursive       bool            `json:"recursive"`
	Sandbox         *policy.Context `json:"sandbox,omitempty"`
}

// FsOpenParams are the params of fs/open (Rust WireFsOpenParams, 4 fields). Mode is a
// serde default: absent = "read", null is a type error ("invalid type: null, expected
// string or map"); in the sequence form it may be left out but Sandbox may not
// (["h","file:///x"] → "invalid length 3, expected struct WireFsOpenParams with 4
// elements", observed from codex 0.169.0 and 0.171.0).
type FsOpenParams struct {
	HandleID string          `json:"handleId"`
	Path     PathURI         `json:"path"`
	Mode     FsOpenMode      `json:"mode,omitempty"`
	Sandbox  *policy.Context `json:"sandbox"`
}

// FsOpenMode is fs/open's mode (capabilities-0.171.0.md §8.1): a unit-variant enum, so
// "replace" and {"replace":null} both decode; "" (absent) means FsOpenRead.
type FsOpenMode string

// The fs/open modes.
const (
	// FsOpenRead opens an existing regular file for fs/readBlock.
	FsOpenRead FsOpenMode = "read"
	// FsOpenReplace creates or truncates the file at open time for fs/writeBlock.
	FsOpenReplace FsOpenMode = "replace"
)

// Variants makes FsOpenMode a serde-style enum for jsonwire.UnmarshalParams.
func (FsOpenMode) Variants() []string { return []string{string(FsOpenRead), string(FsOpenReplace)} }

// FsWriteBlockParams are the params of fs/writeBlock (capabilities-0.171.0.md §8.2):
// Chunk bytes written at Offset with pwrite. A bad chunk fails decoding with the base64
// crate's text ("Invalid symbol 33, offset 0.", -32602).
type FsWriteBlockParams struct {
	HandleID string     `json:"handleId"`
	Offset   uint64     `json:"offset"`
	Chunk    BlockChunk `json:"chunk"`
}

// FsOpenResult is the result of fs/open.
type FsOpenResult struct {
	HandleID string `json:"handleId"`
}

// FsReadBlockParams are the params of fs/readBlock.
type FsReadBlockParams struct {
	HandleID string `json:"handleId"`
	Offset   uint64 `json:"offset"`
	Len      uint64 `json:"len"`
}

// FsReadBlockResult is the result of fs/readBlock; Eof is true iff fewer than Len bytes
// came back.
type FsReadBlockResult struct {
	Chunk jsonwire.Bytes `json:"chunk"` // standard padded base64 on the wire
	Eof   bool           `json:"eof"`
}

// FsCloseParams are the params of fs/close.
type FsCloseParams struct {
	HandleID string `json:"handleId"`
}

// FsEmptyResult is the {} result of write, createDirectory, remove, copy and close.
type FsEmptyResult struct{}

// AppendJSON encodes the result without reflection (jsonrpc.AppendJSONer). Blocks are up
// to 1 MiB.
func (r *FsReadBlockResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"chunk":`...)
	b = r.Chunk.AppendJSON(b)
	b = append(b, `,"eof":`...)
	b = strconv.AppendBool(b, r.Eof)
	return append(b, '}')
}

// AppendJSON encodes the result without reflection.
func (r *FsReadFileResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"dataBase64":`...)
	b = r.DataBase64.AppendJSON(b)
	return append(b, '}')
}

// AppendJSON encodes the result without reflection (jsonrpc.AppendJSONer): a walk returns
// up to 50,000 entries in one message.
func (r *FsWalkResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"entries":[`...)
	for i, e := range r.Entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b = appendProcessJSONString(b, string(e.Path))
		b = append(b, `,"kind":`...)
		b = appendProcessJSONString(b, e.Kind)
		b = append(b, '}')
	}
	b = append(b, `],"errors":[`...)
	for i, e := range r.Errors {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b = appendProcessJSONString(b, string(e.Path))
		b = append(b, `,"message":`...)
		b = appendProcessJSONString(b, e.Message)
		b = append(b, '}')
	}
	b = append(b, `],"truncated":`...)
	b = strconv.AppendBool(b, r.Truncated)
	return append(b, '}')
}

// FsWatchMissingParams are the params of fs/watchMissing (capabilities-0.171.0.md §7;
// Rust FsWatchMissingParams, 3 fields, Present required in the sequence form). WatchID
// is the connection's generation number; Missing the paths expected not to exist;
// Present, if set, a path expected to exist.
type FsWatchMissingParams struct {
	WatchID uint64    `json:"watchId"`
	Missing []PathURI `json:"missing"`
	Present *PathURI  `json:"present"`
}

// FsWatchMissingResult is the result of fs/watchMissing: whether a watch was armed.
type FsWatchMissingResult struct {
	Watching bool `json:"watching"`
}

// FsMissingChangedNotification is the fs/missingChanged notification: the armed watch
// WatchID saw a change, once.
type FsMissingChangedNotification struct {
	WatchID uint64 `json:"watchId"`
}
