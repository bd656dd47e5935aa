package protocol

// EarlyData is the decoded bytes an Arrival handed over (nil for anything else), for
// tests that check the params took them instead of decoding again.
func EarlyData(early any) []byte {
	if e, ok := early.(*EarlyChunk); ok {
		return e.data
	}
	return nil
}
