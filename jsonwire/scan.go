package jsonwire

// Token-level pre-pass over one inbound JSON text (spec/jsonrpc.md §1.3, §9 item 19).
//
// Protocol flow: the scanner walks the first JSON value of a message exactly once, left
// to right, with an explicit container stack (no recursion, so 100k nested brackets cost
// nothing but the error). In that single pass it
//
//   - validates the syntax and reports the first error with the reference's serde_json
//     text and position ("expected ident at line 1 column 2");
//   - counts every value (root and containers included, keys excluded) against MaxValues;
//   - rejects a repeated key in any object ("duplicate JSON object key `k`");
//   - stops at serde_json's recursion limit (MaxDepth containers);
//   - optionally records where chosen members of the root object sit (ScanRoot), so the
//     JSON-RPC envelope can be classified without a second walk.
//
// Positions follow serde_json: line is 1 + the number of '\n' before the offset, column
// the number of bytes between the last '\n' and the offset. Errors raised "at the current
// index" use the offset of the next unread byte; errors raised "at the peeked byte" use
// that offset + 1 (capped at the input length). Strings are checked for UTF-8 only when
// they close, so an invalid byte is reported after the closing quote and loses to any
// escape or control-character error inside the same string (observed from codex 0.169.0).

import (
	"strconv"
	"strings"
)

// synCode names one serde_json-style decoder error.
type synCode uint8

const (
	errEOFValue synCode = iota + 1
	errEOFList
	errEOFObject
	errEOFString
	errExpectedColon
	errExpectedListCommaOrEnd
	errExpectedObjectCommaOrEnd
	errExpectedIdent
	errExpectedValue
	errInvalidEscape
	errInvalidNumber
	errInvalidUnicode
	errControlChar
	errKeyMustBeString
	errLoneLeadingSurrogate
	errTrailingComma
	errTrailingChars
	errUnexpectedEndOfHex
	errRecursion
	errBudget
	errDuplicateKey
)

// synText is the message of each code, as serde_json (and the reference's budget and
// duplicate-key checks) word it.
var synText = [...]string{
	errEOFValue:                 "EOF while parsing a value",
	errEOFList:                  "EOF while parsing a list",
	errEOFObject:                "EOF while parsing an object",
	errEOFString:                "EOF while parsing a string",
	errExpectedColon:            "expected `:`",
	errExpectedListCommaOrEnd:   "expected `,` or `]`",
	errExpectedObjectCommaOrEnd: "expected `,` or `}`",
	errExpectedIdent:            "expected ident",
	errExpectedValue:            "expected value",
	errInvalidEscape:            "invalid escape",
	errInvalidNumber:            "invalid number",
	errInvalidUnicode:           "invalid unicode code point",
	errControlChar:              "control character (\\u0000-\\u001F) found while parsing a string",
	errKeyMustBeString:          "key must be a string",
	errLoneLeadingSurrogate:     "lone leading surrogate in hex escape",
	errTrailingComma:            "trailing comma",
	errTrailingChars:            "trailing characters",
	errUnexpectedEndOfHex:       "unexpected end of hex escape",
	errRecursion:                "recursion limit exceeded",
	errBudget:                   "JSON-RPC message exceeds the limit of " + strconv.Itoa(MaxValues) + " JSON values",
	errDuplicateKey:             "duplicate JSON object key",
}

// SyntaxError is a malformed JSON text: bad syntax, a value budget overrun, a duplicate
// key or too deep nesting. Error returns the reference's detail text, e.g.
// "expected ident at line 1 column 2".
type SyntaxError struct {
	code   synCode
	key    string // the repeated key, for errDuplicateKey
	Line   int    // 1-based line of the error
	Column int    // serde_json column: bytes between the line start and the offset
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	b.WriteString(synText[e.code])
	if e.code == errDuplicateKey {
		b.WriteString(" `")
		b.WriteString(e.key)
		b.WriteString("`")
	}
	b.WriteString(" at line ")
	b.WriteString(strconv.Itoa(e.Line))
	b.WriteString(" column ")
	b.WriteString(strconv.Itoa(e.Column))
	return b.String()
}

// newSyntaxError positions code at byte offset off of data.
func newSyntaxError(data []byte, code synCode, off int) *SyntaxError {
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if data[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return &SyntaxError{code: code, Line: line, Column: off - start}
}

// Member locates one captured member of a root object (see ScanRoot): its value is
// data[Start:End], and Name is the index of its key in the names given to ScanRoot.
type Member struct {
	Name       int
	Start, End int
}

// frame is one open container on the scanner's stack.
type frame struct {
	obj        bool
	keysStart  int                 // first key of this object in scanner.keys
	scratchLen int                 // len(scanner.scratch) when the object opened
	set        map[string]struct{} // keys of a large object; nil while it is small
}

// keySpan locates a decoded object key: in data, or in scratch when it had escapes.
type keySpan struct {
	inScratch  bool
	start, end int
}

// scanner holds the state of one pass. The zero value is ready after reset.
type scanner struct {
	data    []byte
	pos     int
	values  int
	frames  []frame
	keys    []keySpan
	scratch []byte // unescaped keys

	// Root capture (ScanRoot only).
	names      []string // keys of the root object's members to capture; nil captures none
	unbudgeted bool     // ScanRootUnbudgeted: values are not counted against MaxValues
	rootObject bool
	members    []Member // captured members in document order; starts on memberBuf
	pending    int      // index into members of the root value being scanned, or -1
	memberBuf  [8]Member

	// known is a string body the caller has already checked (ScanRootKnown); the zero
	// value names none.
	known KnownString
}

func (s *scanner) reset(data []byte, names []string) {
	s.data = data
	s.pos = 0
	s.values = 0
	s.frames = s.frames[:0]
	s.keys = s.keys[:0]
	s.scratch = s.scratch[:0]
	s.names = names
	s.unbudgeted = false
	s.rootObject = false
	s.members = s.memberBuf[:0] // no allocation for up to len(memberBuf) names
	s.pending = -1
	s.known = KnownString{}
}

// errAt reports code at the current index (serde_json's Deserializer::error).
func (s *scanner) errAt(code synCode) *SyntaxError {
	return newSyntaxError(s.data, code, s.pos)
}

// errPeek reports code at the byte after the current index (serde_json's peek_error).
func (s *scanner) errPeek(code synCode) *SyntaxError {
	off := s.pos + 1
	if off > len(s.data) {
		off = len(s.data)
	}
	return newSyntaxError(s.data, code, off)
}

func (s *scanner) skipWS() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\n', '\t', '\r':
			s.pos++
		default:
			return
		}
	}
}

// count charges one value against the budget; s.pos is at the value (for an object
// member, right after the colon).
//
// The reference raises an overrun from its value seed, before serde_json parses the
// value, and serde_json positions the error only after the enclosing container's end
// check has run: whitespace is skipped, and a closing '}' (object) or a ']' or ','
// plus whitespace (array) is consumed. The duplicate-key error is positioned the same
// way. (Observed from codex 0.169.0.)
func (s *scanner) count() error {
	s.values++
	if s.values <= MaxValues || s.unbudgeted {
		return nil
	}
	s.endCheck()
	return s.errAt(errBudget)
}

// endCheck advances s.pos the way serde_json's end_map / end_seq do for the innermost
// open container before it positions a custom error raised inside it.
func (s *scanner) endCheck() {
	if len(s.frames) == 0 {
		return
	}
	s.skipWS()
	if s.pos >= len(s.data) {
		return
	}
	switch c := s.data[s.pos]; {
	case s.frames[len(s.frames)-1].obj:
		if c == '}' {
			s.pos++
		}
	case c == ']':
		s.pos++
	case c == ',':
		s.pos++
		s.skipWS()
	}
}

type scanState uint8

const (
	stValue    scanState = iota // at the first byte of a value (whitespace skipped, counted)
	stAfter                     // a value just ended
	stArrFirst                  // just after '['
	stArrNext                   // after an array element
	stObjFirst                  // just after '{'
	stObjNext                   // after an object member's value
	stKey                       // at the opening quote of a key
)

// scan checks the first JSON value in s.data and leaves s.pos just after it. Trailing
// bytes are the caller's business.
// It is the scanner's state machine (one case per token in each container state) and
// is exempt from the complexity bound for that reason.
func (s *scanner) scan() error {
	s.skipWS()
	if err := s.count(); err != nil {
		return err
	}
	data := s.data
	st := stValue
	for {
		switch st {
		case stValue:
			if s.pos >= len(data) {
				return s.errPeek(errEOFValue)
			}
			switch c := data[s.pos]; {
			case c == '"':
				s.pos++
				if _, err := s.scanString(); err != nil {
					return err
				}
				st = stAfter
			case c == '{' || c == '[':
				if len(s.frames)+1 >= MaxDepth {
					return s.errPeek(errRecursion)
				}
				s.pos++
				s.frames = append(s.frames, frame{obj: c == '{', keysStart: len(s.keys), scratchLen: len(s.scratch)})
				if c == '{' {
					if len(s.frames) == 1 {
						s.rootObject = true
					}
					st = stObjFirst
				} else {
					st = stArrFirst
				}
			case c == 't':
				if err := s.scanIdent("true"); err != nil {
					return err
				}
				st = stAfter
			case c == 'f':
				if err := s.scanIdent("false"); err != nil {
					return err
				}
				st = stAfter
			case c == 'n':
				if err := s.scanIdent("null"); err != nil {
					return err
				}
				st = stAfter
			case c == '-' || c >= '0' && c <= '9':
				if err := s.scanNumber(); err != nil {
					return err
				}
				st = stAfter
			default:
				return s.errPeek(errExpectedValue)
			}

		case stAfter:
			n := len(s.frames)
			if n == 0 {
				return nil
			}
			if n == 1 && s.pending >= 0 {
				s.members[s.pending].End = s.pos
				s.pending = -1
			}
			if s.frames[n-1].obj {
				st = stObjNext
			} else {
				st = stArrNext
			}

		case stArrFirst, stArrNext:
			s.skipWS()
			if s.pos >= len(data) {
				return s.errPeek(errEOFList)
			}
			c := data[s.pos]
			if c == ']' {
				s.pos++
				s.pop()
				st = stAfter
				continue
			}
			if st == stArrNext {
				if c != ',' {
					return s.errPeek(errExpectedListCommaOrEnd)
				}
				s.pos++
				s.skipWS()
				if s.pos >= len(data) {
					return s.errPeek(errEOFValue)
				}
				if data[s.pos] == ']' {
					return s.errPeek(errTrailingComma)
				}
			}
			if err := s.count(); err != nil {
				return err
			}
			st = stValue

		case stObjFirst, stObjNext:
			s.skipWS()
			if s.pos >= len(data) {
				return s.errPeek(errEOFObject)
			}
			c := data[s.pos]
			if c == '}' {
				s.pos++
				s.pop()
				st = stAfter
				continue
			}
			if st == stObjNext {
				if c != ',' {
					return s.errPeek(errExpectedObjectCommaOrEnd)
				}
				s.pos++
				s.skipWS()
				if s.pos >= len(data) {
					return s.errPeek(errEOFValue)
				}
				c = data[s.pos]
				if c == '}' {
					return s.errPeek(errTrailingComma)
				}
			}
			if c != '"' {
				return s.errPeek(errKeyMustBeString)
			}
			st = stKey

		case stKey:
			if err := s.scanKey(); err != nil {
				return err
			}
			s.skipWS()
			if s.pos >= len(data) {
				return s.errPeek(errEOFObject)
			}
			if data[s.pos] != ':' {
				return s.errPeek(errExpectedColon)
			}
			s.pos++
			if err := s.count(); err != nil {
				return err
			}
			s.skipWS()
			if s.pending >= 0 && len(s.frames) == 1 {
				s.members[s.pending].Start = s.pos
			}
			st = stValue
		}
	}
}

func (s *scanner) pop() {
	f := &s.frames[len(s.frames)-1]
	if f.obj {
		s.keys = s.keys[:f.keysStart]
		s.scratch = s.scratch[:f.scratchLen]
	}
	f.set = nil
	s.frames = s.frames[:len(s.frames)-1]
}

// scanKey reads the key at s.pos (an opening quote), rejects a repeat within the
// current object and, at the root, notes the members named in s.names.
func (s *scanner) scanKey() error {
	s.pos++
	start := s.pos
	escaped, err := s.scanString()
	if err != nil {
		return err
	}
	end := s.pos - 1
	span := keySpan{start: start, end: end}
	if escaped {
		ss := len(s.scratch)
		s.scratch = appendUnescaped(s.scratch, s.data[start:end])
		span = keySpan{inScratch: true, start: ss, end: len(s.scratch)}
	}
	key := s.keyBytes(span)
	f := &s.frames[len(s.frames)-1]
	if s.isDuplicate(f, key) {
		// The reference raises this from its map visitor; serde_json positions it after
		// the object's end check.
		k := string(key)
		s.endCheck()
		e := s.errAt(errDuplicateKey)
		e.key = k
		return e
	}
	s.keys = append(s.keys, span)
	if len(s.frames) == 1 {
		for id, name := range s.names {
			if string(key) == name {
				s.pending = len(s.members)
				s.members = append(s.members, Member{Name: id})
				break
			}
		}
	}
	return nil
}

func (s *scanner) keyBytes(k keySpan) []byte {
	if k.inScratch {
		return s.scratch[k.start:k.end]
	}
	return s.data[k.start:k.end]
}

// isDuplicate reports whether key already occurred in f. Small objects are searched
// linearly; past linearKeys keys the object switches to a set.
func (s *scanner) isDuplicate(f *frame, key []byte) bool {
	if f.set != nil {
		if _, ok := f.set[string(key)]; ok {
			return true
		}
		f.set[string(key)] = struct{}{}
		return false
	}
	keys := s.keys[f.keysStart:]
	for _, k := range keys {
		if string(s.keyBytes(k)) == string(key) {
			return true
		}
	}
	if len(keys)+1 > linearKeys {
		f.set = make(map[string]struct{}, 2*linearKeys)
		for _, k := range keys {
			f.set[string(s.keyBytes(k))] = struct{}{}
		}
		f.set[string(key)] = struct{}{}
	}
	return false
}

// Validate checks that data is exactly one JSON value (surrounding whitespace allowed)
// within the value budget, without duplicate keys or excessive nesting. The error, if
// any, is a *SyntaxError.
func Validate(data []byte) error {
	s := getScanner(data, nil)
	defer putScanner(s)
	if err := s.scan(); err != nil {
		return err
	}
	return CheckTrailing(data, s.pos)
}

// Root describes the first JSON value of a text, as ScanRoot found it.
type Root struct {
	// Object reports whether the value is a JSON object.
	Object bool
	// Members are the captured members of the root object, in document order.
	Members []Member
	// End is the offset just after the value; what follows is the caller's business
	// (see CheckTrailing).
	End int
}

// ScanRoot checks the first JSON value of data as Validate does (syntax, MaxValues,
// duplicate keys, MaxDepth), in one pass, and stops right after it. When that value is
// an object, the members whose (unescaped) keys equal one of names are appended to
// members, which Root.Members then holds; the keys of an object are unique, so at most
// len(names) are appended. Give members the capacity len(names) and ScanRoot does not
// allocate. The error, if any, is a *SyntaxError; trailing bytes are not checked, so a
// caller can report a shape error first, as the reference does for its envelope.
//
// ScanRoot is safe for concurrent use; it retains neither data nor members.
func ScanRoot(data []byte, names []string, members []Member) (Root, error) {
	return ScanRootKnown(data, names, members, KnownString{})
}

// KnownString names the body of one JSON string in a text, data[Start:End] between its
// quotes, that the caller has already checked holds only base64 symbols
// (A–Z a–z 0–9 + / =): no quote, backslash, control or non-ASCII byte, so scanning it
// again could find nothing. fs/writeBlock's chunk is checked this way while the request
// arrives (executor/protocol.WriteBlockArrival), which spares the scanner a pass over
// 1.4 MB.
type KnownString struct{ Start, End int }

// ScanRootKnown is ScanRoot for a text in which known names a checked string body: a
// string the scan enters exactly at known.Start ends at known.End without its bytes
// being looked at. The result is the same as ScanRoot's whenever the promise holds. A
// known that does not lie between two quotes of data is ignored; one the scan never
// enters at its start changes nothing.
func ScanRootKnown(data []byte, names []string, members []Member, known KnownString) (Root, error) {
	s := getScanner(data, names)
	defer putScanner(s)
	if known.Start > 0 && known.Start <= known.End && known.End < len(data) && data[known.Start-1] == '"' && data[known.End] == '"' {
		s.known = known
	}
	if err := s.scan(); err != nil {
		return Root{}, err
	}
	return Root{Object: s.rootObject, Members: append(members, s.members...), End: s.pos}, nil
}

// CheckTrailing returns serde_json's "trailing characters" *SyntaxError, positioned
// as serde_json positions it, when anything but JSON whitespace follows offset end in
// data, and nil otherwise.
func CheckTrailing(data []byte, end int) error {
	r := reader{data: data, pos: end}
	r.skipWS()
	if r.pos < len(data) {
		return newSyntaxError(data, errTrailingChars, min(r.pos+1, len(data)))
	}
	return nil
}
