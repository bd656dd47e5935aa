package capdiscover

// Bounded, optional file reads (spec/capabilities-0.171.0.md §4.2 step 7). Every file
// discovery returns goes through reader.read: a missing or non-regular file is skipped
// silently; anything else that keeps it out is one warning, in the order files are read.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/internal/rustutf8"
)

// reader reads the files of one root against its byte budget and collects warnings. It is
// used by one goroutine.
type reader struct {
	// denyGlobs are the sandbox's deny patterns, re-checked on every read (nil outside
	// the helper).
	denyGlobs []string
	// total is the number of bytes returned so far, at most MaxRootBytes.
	total    int64
	warnings []string
}

func (r *reader) warn(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// read returns the contents of the file native (whose URI is uri), or ok false when the
// file is absent, not a regular file, too large, over the root's budget, unreadable or
// not UTF-8 (all but the first two with a warning).
func (r *reader) read(native, uri string) (file protocol.CapabilityFile, ok bool) {
	st, err := os.Stat(native)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return file, false
		}
		r.warn("failed to inspect capability file %s: %s", uri, oserr.Text(err))
		return file, false
	}
	if !st.Mode().IsRegular() {
		return file, false
	}
	if st.Size() > MaxFileBytes {
		r.warn("capability file %s exceeds the %d-byte limit", uri, MaxFileBytes)
		return file, false
	}
	if r.total+st.Size() > MaxRootBytes {
		r.warn("capability root bundle exceeds the %d-byte limit", MaxRootBytes)
		return file, false
	}
	data, err := r.readAll(native)
	if errors.Is(err, errNotRegular) || errors.Is(err, syscall.ENOENT) {
		return file, false // replaced or removed since the stat
	}
	if err != nil {
		r.warn("failed to read capability file %s: %s", uri, oserr.Text(err))
		return file, false
	}
	// The file may have grown since the stat: the limits hold for what was read.
	if len(data) > MaxFileBytes {
		r.warn("capability file %s exceeds the %d-byte limit", uri, MaxFileBytes)
		return file, false
	}
	if r.total+int64(len(data)) > MaxRootBytes {
		r.warn("capability root bundle exceeds the %d-byte limit", MaxRootBytes)
		return file, false
	}
	if msg, bad := rustutf8.ErrorText(data); bad {
		r.warn("capability file %s is not UTF-8: %s", uri, msg)
		return file, false
	}
	r.total += int64(len(data))
	return protocol.CapabilityFile{Path: protocol.PathURI(uri), Contents: string(data)}, true
}

// readAll reads at most MaxFileBytes+1 bytes of native; a sandbox deny glob matching it
// refuses the read as a masked file would (EACCES). The open does not block (a file
// swapped for a FIFO after the stat cannot stall the scan) and a file that is no longer
// regular reads as empty-and-skipped via errNotRegular.
func (r *reader) readAll(native string) ([]byte, error) {
	if fs.DeniedByGlobs(r.denyGlobs, native) {
		return nil, syscall.EACCES
	}
	f, err := os.OpenFile(native, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	return io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
}

// errNotRegular: the file stopped being a regular file between the stat and the open; it
// is skipped silently like any non-regular file.
var errNotRegular = errors.New("capdiscover: not a regular file")
