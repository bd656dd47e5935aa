package channel

// SetSendSeqForTest moves the next outbound seq (seq exhaustion tests).
func SetSendSeqForTest(c *Conn, seq uint32) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.sendSeq = seq
}

// KeysClearedForTest reports whether both directions' CipherStates were cleared.
func KeysClearedForTest(c *Conn) bool {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.rx.Err() != nil && c.tx.Err() != nil
}

// MaxSeqForTest is the seq a sender never uses.
const MaxSeqForTest = maxSeq
