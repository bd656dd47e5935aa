package jsonwire

// Base64ErrorForTest exposes the reference-order base64 check, which normally only runs
// after the stdlib decoder failed.
func Base64ErrorForTest(s string) error { return base64Error([]byte(s)) }

// SetSlowStringsForTest turns the long-string fast paths off (true) or on (false).
func SetSlowStringsForTest(slow bool) { slowStringsForTest = slow }
