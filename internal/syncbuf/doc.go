// Package syncbuf is a bytes.Buffer that is safe for concurrent use: the sink a test
// hands to a logger or a child's stderr while goroutines write to it, and reads with
// String while they may still be writing.
//
// Layers: a leaf (standard library only); imported by tests of cmd/ and executor/.
package syncbuf
