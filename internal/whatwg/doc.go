// Package whatwg is the one home of the WHATWG URL rules the executor needs, written to
// match rust-url (the parser of the released reference) byte for byte on the inputs the
// wire carries. Its callers are protocol.PathURI (PathUri parsing and serialization),
// sandbox/policy (the policy's PathUri) and sandbox (proxy variable values).
//
// It holds the pieces, not a general URL type: input trimming, the scheme, percent-decoding
// and the percent-encode sets, dot segments and drive letters, ports, and the host parser
// (domain to ASCII with the documented IDNA deviation, IPv4 in every WHATWG spelling,
// IPv6 with its compressed serialization). Errors are Error values whose text is
// rust-url's url::ParseError text.
//
// Layers: a leaf; standard library only. No I/O, no goroutines, no state.
package whatwg
