package noise

// SetNonceForTest moves a CipherState's counter (exhaustion tests).
func SetNonceForTest(cs *CipherState, n uint64) { cs.setNonceForTest(n) }

// KeyForTest returns a copy of the CipherState key (zeroing tests).
func KeyForTest(cs *CipherState) [KeyLen]byte { return cs.key }
