package channel

import "encoding/binary"

// Outbound framing (spec/relay-noise.md §7): u32be(len) ‖ message, starting a fresh
// record and cut into RecordPlaintextLen pieces. A 359151-byte message becomes
// 5 × 61440 + 51955-byte records.

// forEachRecord calls fn with the plaintext of each record of msg, in order. The first
// record is assembled in scratch (prefix plus the start of msg); later records alias
// msg. fn must not retain its argument. The caller checks 1 ≤ len(msg) ≤ MaxMessageLen.
func forEachRecord(scratch *[RecordPlaintextLen]byte, msg []byte, fn func(plaintext []byte) error) error {
	binary.BigEndian.PutUint32(scratch[:LengthPrefixLen], uint32(len(msg)))
	n := copy(scratch[LengthPrefixLen:], msg)
	if err := fn(scratch[:LengthPrefixLen+n]); err != nil {
		return err
	}
	for rest := msg[n:]; len(rest) > 0; {
		k := min(len(rest), RecordPlaintextLen)
		if err := fn(rest[:k]); err != nil {
			return err
		}
		rest = rest[k:]
	}
	return nil
}

// recordCount returns how many records a message of n bytes occupies.
func recordCount(n int) int {
	return (LengthPrefixLen + n + RecordPlaintextLen - 1) / RecordPlaintextLen
}

// reassembler splits decrypted records back into messages. Record and message
// boundaries are independent: one record may hold several messages, a message may
// span many records, and a length prefix may itself be split.
//
// Checks: a record over RecordPlaintextLen → ErrRecordTooLarge; a declared length of 0
// → ErrZeroLengthMessage and over MaxMessageLen → ErrMessageTooLarge, as soon as the
// four prefix bytes are visible. Buffered bytes never exceed MaxReassemblyLen. Pure;
// after an error the caller must discard it. Not safe for concurrent use.
type reassembler struct {
	hdr  [LengthPrefixLen]byte
	hdrN int    // prefix bytes seen for the current message
	want int    // declared length once hdrN == LengthPrefixLen
	buf  []byte // body bytes of a message spanning records
}

// initialSpanCap caps the first allocation for a message that spans records, so that a
// bare 4-byte prefix cannot make the receiver allocate 64 MiB up front; append grows it
// as data actually arrives. Eight records (480 KiB) hold a process/output of the largest
// chunk an executor reads at once (256 KiB, ~350 KB as base64 JSON) in one allocation:
// at four, every such message was copied once more as it grew (issue 16, docs/bench.md).
const initialSpanCap = 8 * RecordPlaintextLen

// feed consumes one record's plaintext and appends the messages it completes to msgs.
// feed takes ownership of record: returned messages may alias it, but never overlap
// one another and each has its capacity capped at its length, so appending to one
// cannot clobber another. kept reports whether a returned message aliases record; when
// false, record's bytes were copied and its storage is free again (PacketReleaser).
func (r *reassembler) feed(msgs [][]byte, record []byte) (_ [][]byte, kept bool, _ error) {
	if len(record) > RecordPlaintextLen {
		return msgs, false, ErrRecordTooLarge
	}
	for len(record) > 0 {
		if r.hdrN < LengthPrefixLen {
			k := copy(r.hdr[r.hdrN:], record)
			r.hdrN += k
			record = record[k:]
			if r.hdrN < LengthPrefixLen {
				break
			}
			n := binary.BigEndian.Uint32(r.hdr[:])
			switch {
			case n == 0:
				return msgs, kept, ErrZeroLengthMessage
			case uint64(n) > MaxMessageLen:
				return msgs, kept, ErrMessageTooLarge
			}
			r.want = int(n)
			if len(record) >= r.want {
				// Whole message inside this record: hand out a capped sub-slice.
				msgs = append(msgs, record[:r.want:r.want])
				kept = true
				record = record[r.want:]
				r.hdrN = 0
				continue
			}
			r.buf = getSpan(r.want)
		}
		k := min(r.want-len(r.buf), len(record))
		r.buf = append(r.buf, record[:k]...)
		record = record[k:]
		if len(r.buf) == r.want {
			msgs = append(msgs, r.buf)
			r.buf, r.hdrN = nil, 0
		}
	}
	return msgs, kept, nil
}

// spanRoom returns the message being reassembled when a message spanning records is
// under way, all n plaintext bytes of the next record belong to it and its buffer has room
// for them, so the record can be decrypted straight onto its end (then spanFilled). n is
// at most RecordPlaintextLen.
func (r *reassembler) spanRoom(n int) ([]byte, bool) {
	if r.hdrN < LengthPrefixLen || r.buf == nil || n <= 0 || n > RecordPlaintextLen ||
		n > r.want-len(r.buf) || n > cap(r.buf)-len(r.buf) {
		return nil, false
	}
	return r.buf, true
}

// spanFilled takes the message buffer spanRoom returned, extended by one record's
// plaintext, and appends the message to msgs once it is complete.
func (r *reassembler) spanFilled(msgs [][]byte, buf []byte) [][]byte {
	r.buf = buf
	if len(r.buf) == r.want {
		msgs = append(msgs, r.buf)
		r.buf, r.hdrN = nil, 0
	}
	return msgs
}

// buffered returns the bytes held for an incomplete message (prefix included).
func (r *reassembler) buffered() int { return r.hdrN + len(r.buf) }
