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
	if msg, bad := utf8ErrorText(data); bad {
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

// utf8ErrorText validates b as Rust's str::from_utf8 does and renders its Utf8Error:
// "invalid utf-8 sequence of N bytes from index I" when N bytes form an invalid sequence,
// "incomplete utf-8 byte sequence from index I" when the input ends inside one.
func utf8ErrorText(b []byte) (string, bool) {
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			i++
			continue
		}
		n, incomplete := invalidSequence(b[i:])
		switch {
		case incomplete:
			return fmt.Sprintf("incomplete utf-8 byte sequence from index %d", i), true
		case n > 0:
			return fmt.Sprintf("invalid utf-8 sequence of %d bytes from index %d", n, i), true
		}
		i += width(c)
	}
	return "", false
}

// width is the encoded length announced by a valid lead byte.
func width(c byte) int {
	switch {
	case c >= 0xF0:
		return 4
	case c >= 0xE0:
		return 3
	default:
		return 2
	}
}

// invalidSequence checks the multi-byte sequence at the start of b (b[0] >= 0x80) with
// Rust's rules (core::str::validations::run_utf8_validation): it returns the error length
// n (1 to 3) of an invalid sequence, incomplete when b ends first, or 0, false when the
// sequence is valid.
func invalidSequence(b []byte) (n int, incomplete bool) {
	first := b[0]
	cont := func(i int) (ok, end bool) {
		if i >= len(b) {
			return false, true
		}
		return b[i]&0xC0 == 0x80, false
	}
	var lo, hi byte = 0x80, 0xBF // allowed range of the second byte
	var w int
	switch {
	case first >= 0xC2 && first <= 0xDF:
		w = 2
	case first == 0xE0:
		w, lo = 3, 0xA0
	case first >= 0xE1 && first <= 0xEC, first == 0xEE, first == 0xEF:
		w = 3
	case first == 0xED:
		w, hi = 3, 0x9F
	case first == 0xF0:
		w, lo = 4, 0x90
	case first >= 0xF1 && first <= 0xF3:
		w = 4
	case first == 0xF4:
		w, hi = 4, 0x8F
	default:
		return 1, false
	}
	if len(b) < 2 {
		return 0, true
	}
	if b[1] < lo || b[1] > hi {
		return 1, false
	}
	for i := 2; i < w; i++ {
		ok, end := cont(i)
		if end {
			return 0, true
		}
		if !ok {
			return i, false
		}
	}
	return 0, false
}
