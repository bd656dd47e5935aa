// Package channel runs the Noise relay channel of one relay stream
// (spec/relay-noise.md §4, §5, §7, §8): the two-message hybrid IK handshake with an
// authorization hook, then JSON-RPC messages framed into encrypted, sequenced records.
//
// # Layers
//
// Below: a RecordConn (defined here; relay/mux's stream satisfies it) carries the
// stream's packets, either a handshake message or a transport record with its seq.
// Records may arrive out of order or duplicated. Beside: package noise does the
// cryptography. Above: *Conn satisfies jsonrpc.MessageConn structurally
// (ReadMessage/WriteMessage/Close); this package does not parse JSON and knows nothing
// of relay frames, stream ids, websockets or the registry.
//
// # Protocol flow
//
//	initiator (harness)                          responder (executor)
//	  Packet{Handshake, msg1(authorization)} ->
//	                                              decrypt msg1; authorization ≤ 4096 B UTF-8
//	                                              Authorize(ctx, peer key, authorization)
//	  <- Packet{Handshake, msg2(empty)}           only after Authorize succeeds
//	  <- Packet{Handshake, msg2(rejected marker)} if Authorize fails with
//	                                              ErrExecutorCredentialsRejected (registry 401)
//	  Packet{Seq: 0, 1, …} <-> Packet{Seq: 0, 1, …}   per-direction seq from 0
//
// Responder reads message 1 from the RecordConn itself; RespondTo takes a message 1
// the caller already holds (a relay read loop that inspects the first frame).
//
// Message framing inside the record stream (§7):
//
//	message := u32be(len) ‖ bytes           1 ≤ len ≤ 64 MiB
//	each message starts a fresh record; records hold ≤ 61440 plaintext bytes;
//	a receiver reassembles across records and splits several messages out of one.
//
// # Limits (see limits.go)
//
// Record plaintext 61440 B; message 1…64 MiB; reassembly buffer ≤ 4 + 64 MiB;
// reorder window 64 records and 1 MiB of pending ciphertext per direction; seq never
// wraps (the sender fails before using 2^32−1); authorization ≤ 4096 B UTF-8.
//
// # Invariants
//
//   - Message 2 is never sent before Authorize returned nil (or, for the rejection
//     variant, an error wrapping ErrExecutorCredentialsRejected).
//   - Authorize never sees an authorization over MaxAuthorizationLen or not UTF-8.
//   - No record is decrypted twice, out of order, or after a failure.
//   - Each outbound message starts a fresh record; seqs are consecutive from 0 and
//     2^32−1 is never sent.
//   - Buffered inbound bytes stay ≤ MaxPendingBytes (reorder) + MaxReassemblyLen.
//
// # Failure
//
// Any receive-side failure (reorder overflow, decrypt failure, framing error, transport
// error) ends the read side for good: every later ReadMessage returns the same error.
// Any failure while writing a message ends the write side for good (a partial message
// may be on the wire and the nonce has advanced). Duplicate and stale records are
// dropped before decryption, so they never disturb the implicit nonce. The caller
// translates a failed Conn into a relay reset; this package never sends resets.
//
// # Concurrency and ownership
//
// Initiator and Responder run the handshake on the calling goroutine and return a
// *Conn; this package starts no goroutines. ReadMessage and WriteMessage may run
// concurrently with each other; each is serialised by its own lock (readMu, writeMu;
// they are never held together). Close may be called at any time from any goroutine: it
// cancels in-flight calls, closes the RecordConn if it implements io.Closer, waits for
// the in-flight calls to return, then zeroes both CipherStates. Lock order: closeMu is
// never held while taking readMu or writeMu.
//
// RecordConn ownership: a Packet returned by ReadPacket belongs to the channel from
// then on (its Payload may be retained, aliased by returned messages, and overwritten:
// records are decrypted in place). A Packet
// passed to WritePacket is never touched by the channel after the call returns, so the
// RecordConn may queue it. Neither keys, authorizations, plaintext nor ciphertext appear
// in errors.
//
// Message ownership: a message ReadMessage returns is the caller's. One that spans
// records was reassembled into a pooled buffer (msgpool.go), which the caller may hand
// back with ReleaseMessage once nothing uses it any more (the harness does for the
// output it decodes, issue 16); one that is never released is collected.
package channel
