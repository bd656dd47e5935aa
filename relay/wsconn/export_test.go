package wsconn

// WritesRawFrames reports whether c builds and writes its binary frames itself (rawframe.go).
func WritesRawFrames(c *Conn) bool { return c.raw }

// SetRawFramesForTest switches c between its own binary frames and the library's (benchmarks
// compare the two write paths on one connection).
func SetRawFramesForTest(c *Conn, on bool) { c.raw = on && c.cork != nil }

// IsServerConn reports whether c was accepted by this package (unmasked frames).
func IsServerConn(c *Conn) bool { return c.server }
