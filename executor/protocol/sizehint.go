package protocol

// JSONSizeHint methods (jsonrpc.SizeHinter): upper bounds of the AppendJSON encodings of
// the types that carry byte payloads, so the connection encodes them into a pooled
// buffer of the right size class (issue 16). A bound only has to be safe, not tight: an
// encoding longer than its hint still works, it just grows its buffer.

// fixedJSONBound covers member names, punctuation, integers (≤ 20 digits each) and
// booleans of one object, in bytes.
const fixedJSONBound = 160

// base64JSONLen is the length of n bytes as a padded base64 JSON string, quotes included.
func base64JSONLen(n int) int { return (n+2)/3*4 + 2 }

// stringJSONBound bounds the JSON string encoding of s: every byte escaped as \u00XX.
func stringJSONBound(s string) int { return 6*len(s) + 2 }

// JSONSizeHint bounds the encoding of n.
func (n *ProcessOutputNotification) JSONSizeHint() int {
	return fixedJSONBound + stringJSONBound(n.ProcessID) + stringJSONBound(string(n.Stream)) + base64JSONLen(len(n.Chunk))
}

// JSONSizeHint bounds the encoding of r.
func (r *ProcessReadResult) JSONSizeHint() int {
	n := fixedJSONBound
	for i := range r.Chunks {
		n += fixedJSONBound + stringJSONBound(string(r.Chunks[i].Stream)) + base64JSONLen(len(r.Chunks[i].Chunk))
	}
	if r.Failure != nil {
		n += stringJSONBound(*r.Failure)
	}
	return n
}

// JSONSizeHint bounds the encoding of d.
func (d *HTTPBodyDelta) JSONSizeHint() int {
	n := fixedJSONBound + stringJSONBound(d.RequestID) + base64JSONLen(len(d.DeltaBase64))
	if d.Error != nil {
		n += stringJSONBound(*d.Error)
	}
	return n
}

// JSONSizeHint bounds the encoding of r.
func (r *FsReadBlockResult) JSONSizeHint() int { return fixedJSONBound + base64JSONLen(len(r.Chunk)) }

// JSONSizeHint bounds the encoding of r.
func (r *FsReadFileResult) JSONSizeHint() int {
	return fixedJSONBound + base64JSONLen(len(r.DataBase64))
}
