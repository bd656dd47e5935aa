package process

import "github.com/execlab/executor/executor/protocol"

// retainedChunk is one output chunk kept for process/read.
type retainedChunk struct {
	seq    uint64
	stream protocol.ExecOutputStream
	data   []byte   // never modified after it is appended
	buf    *readBuf // data's pooled buffer (readbuf.go); nil when data is its own allocation
}

// outputLog is a per-process FIFO of retained chunks bounded by bytes and count; the
// oldest chunks are evicted silently (spec/jsonrpc.md §5.4). It is a pure data
// structure, guarded by its owner's mutex.
//
// A protecting log (outputAck processes, docs/reliability.md) never evicts a chunk with a
// seq above protectAfter (not yet acknowledged): its owner stops reading instead. The
// acknowledged chunks stay readable under the usual bounds, as in released mode.
type outputLog struct {
	maxBytes     int
	maxChunks    int
	protect      bool
	protectAfter uint64

	buf   []retainedChunk // ring storage; grows up to maxChunks
	head  int             // index of the oldest chunk in buf
	n     int             // number of retained chunks
	bytes int             // sum of len(data) over retained chunks
}

func newOutputLog(maxBytes, maxChunks int) outputLog {
	return outputLog{maxBytes: maxBytes, maxChunks: maxChunks}
}

// push appends a chunk, then evicts the oldest chunks while the log is over either bound.
func (l *outputLog) push(c retainedChunk) {
	if l.n == len(l.buf) {
		l.grow()
	}
	l.buf[(l.head+l.n)%len(l.buf)] = c
	l.n++
	l.bytes += len(c.data)
	l.evict()
}

// evict drops the oldest chunks while the log is over either bound, except protected ones.
func (l *outputLog) evict() {
	for l.n > 0 && (l.bytes > l.maxBytes || l.n > l.maxChunks) {
		old := &l.buf[l.head]
		if l.protect && old.seq > l.protectAfter {
			return
		}
		l.bytes -= len(old.data)
		old.buf.release() // the log's reference
		*old = retainedChunk{}
		l.head = (l.head + 1) % len(l.buf)
		l.n--
	}
}

func (l *outputLog) grow() {
	size := 2 * len(l.buf)
	if size < 16 {
		size = 16
	}
	if !l.protect && size > l.maxChunks+1 {
		size = l.maxChunks + 1 // push evicts down to maxChunks right after growing
	}
	nb := make([]retainedChunk, size)
	for i := 0; i < l.n; i++ {
		nb[i] = l.buf[(l.head+i)%len(l.buf)]
	}
	l.buf, l.head = nb, 0
}

// setProtectAfter unprotects the chunks with seq ≤ seq (acknowledged) and evicts what the
// bounds now allow.
func (l *outputLog) setProtectAfter(seq uint64) {
	l.protectAfter = seq
	l.evict()
}

// find returns the retained chunk with exactly seq, or nil.
func (l *outputLog) find(seq uint64) *retainedChunk {
	i := l.firstAfter(seq - 1)
	if i < l.n && l.at(i).seq == seq {
		return l.at(i)
	}
	return nil
}

// bytesBetween returns the bytes of the retained chunks with lo < seq ≤ hi.
func (l *outputLog) bytesBetween(lo, hi uint64) int {
	total := 0
	for i := l.firstAfter(lo); i < l.n && l.at(i).seq <= hi; i++ {
		total += len(l.at(i).data)
	}
	return total
}

// countAfter returns the number of retained chunks with seq > seq.
func (l *outputLog) countAfter(seq uint64) int { return l.n - l.firstAfter(seq) }

// at returns the i-th oldest retained chunk.
func (l *outputLog) at(i int) *retainedChunk { return &l.buf[(l.head+i)%len(l.buf)] }

// firstAfter returns the index of the oldest retained chunk with seq > after (l.n if none).
// Seqs are ascending, so this is a binary search.
func (l *outputLog) firstAfter(after uint64) int {
	lo, hi := 0, l.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if l.at(mid).seq <= after {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// collect returns the chunks with seq > after under the process/read byte budget
// (spec/jsonrpc.md §3.2): the first chunk is always returned; stop before a chunk that
// would exceed maxBytes, or once maxBytes is reached. maxBytes < 0 means unlimited.
// The returned chunks share their data with the log (it is never modified); their pooled
// buffers are marked shared, so they are never reused (readbuf.go).
func (l *outputLog) collect(after uint64, maxBytes int64) []protocol.ProcessOutputChunk {
	start := l.firstAfter(after)
	if start == l.n {
		return nil
	}
	out := make([]protocol.ProcessOutputChunk, 0, l.n-start)
	var total int64
	for i := start; i < l.n; i++ {
		c := l.at(i)
		size := int64(len(c.data))
		if maxBytes >= 0 && len(out) > 0 && total+size > maxBytes {
			break
		}
		total += size
		if c.buf != nil {
			c.buf.shared = true
		}
		out = append(out, protocol.ProcessOutputChunk{Seq: c.seq, Stream: c.stream, Chunk: c.data})
		if maxBytes >= 0 && total >= maxBytes {
			break
		}
	}
	return out
}

// texts returns the retained output as the sandboxDenied heuristic reads it
// (spec/sandbox.md §5): stdout (pipes' stdout and pty chunks), stderr, and every chunk
// in seq order. The slices are fresh copies.
func (l *outputLog) texts() (stdout, stderr, all []byte) {
	for i := 0; i < l.n; i++ {
		c := l.at(i)
		if c.stream == protocol.StreamStderr {
			stderr = append(stderr, c.data...)
		} else {
			stdout = append(stdout, c.data...)
		}
		all = append(all, c.data...)
	}
	return stdout, stderr, all
}
