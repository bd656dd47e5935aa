package frame

import "strings"

// Validate runs the reference's receive-side checks in its order; the first failure decides
// (spec/relay-noise.md §3):
//
//	1  Version == 1                                 *VersionError
//	2  StreamID not empty after trimming whitespace ErrMissingStreamID
//	   len(StreamID) <= MaxStreamIDLen (ours)       ErrStreamIDTooLong
//	3  Data: SegmentIndex 0, SegmentCount 1,
//	   Payload non-empty                            ErrDataMissingFields
//	4  Reset: Reason non-empty                      ErrResetMissingReason
//	5  Handshake: Payload non-empty                 ErrHandshakeMissingPayload
//	6  a body is present                            ErrMissingBody
//
// Ack, Resume and Heartbeat bodies always pass. Validate does not allocate on success.
func (f *Frame) Validate() error {
	if f.Version != Version {
		return &VersionError{Version: f.Version}
	}
	// strings.TrimSpace trims Unicode White_Space, the same set as Rust's str::trim.
	if strings.TrimSpace(f.StreamID) == "" {
		return ErrMissingStreamID
	}
	if len(f.StreamID) > MaxStreamIDLen {
		return ErrStreamIDTooLong
	}
	if isNilBody(f.Body) {
		return ErrMissingBody
	}
	switch b := f.Body.(type) {
	case *Data:
		if b.SegmentIndex != DataSegmentIndex || b.SegmentCount != DataSegmentCount || len(b.Payload) == 0 {
			return ErrDataMissingFields
		}
	case *Reset:
		if b.Reason == "" {
			return ErrResetMissingReason
		}
	case *Handshake:
		if len(b.Payload) == 0 {
			return ErrHandshakeMissingPayload
		}
	case *Ack, *Resume, *Heartbeat:
	default:
		return ErrMissingBody
	}
	return nil
}
