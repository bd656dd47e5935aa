package fs

// DecodeHelperResponse exposes the helper response decoder to the fuzz test.
var DecodeHelperResponse = decodeHelperResponse
