package noise

import "encoding/binary"

// AppendPrologue appends the relay prologue to out (spec/relay-noise.md §5.4):
//
//	u64be(len) ‖ "codex-exec-server-relay-noise/v1"
//	u64be(len) ‖ environment_id
//	u64be(len) ‖ executor_registration_id   (verbatim from the register response)
//	u64be(len) ‖ stream_id
//
// For ("env-1", "registration-1", "stream-1") the result is 91 bytes. Any id mismatch
// between the peers makes message 1 undecryptable.
func AppendPrologue(out []byte, environmentID, registrationID, streamID string) []byte {
	for _, part := range [...]string{PrologueDomain, environmentID, registrationID, streamID} {
		out = binary.BigEndian.AppendUint64(out, uint64(len(part)))
		out = append(out, part...)
	}
	return out
}
