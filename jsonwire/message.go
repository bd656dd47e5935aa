package jsonwire

// The JSON-RPC message classes and the walk of a validated object, shared by both ends of
// the protocol: executor/jsonrpc (the executor reading requests) and the harness SDK (a
// client reading replies and notifications) classify a message with the same function and
// scan it with the same scanner (ScanRoot, ScanRootUnbudgeted).

// Kind classifies a JSON-RPC message (spec/jsonrpc.md §1.2: first match wins).
type Kind uint8

const (
	KindRequest      Kind = iota + 1 // method and id
	KindNotification                 // method only
	KindResponse                     // result
	KindError                        // id and error
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	case KindError:
		return "error"
	}
	return "unknown"
}

// Classify is the first-match classification of spec/jsonrpc.md §1.2, given which of the
// members method, id and result the message has: method and id make a request, method
// alone a notification, result a response, and anything else an error response, whose
// members (error, id) the caller then requires. What counts as present is the caller's
// rule (the harness ignores "id": null, as the reference client does).
func Classify(method, id, result bool) Kind {
	switch {
	case method && id:
		return KindRequest
	case method:
		return KindNotification
	case result:
		return KindResponse
	}
	return KindError
}

// ScanRootUnbudgeted is ScanRoot without the MaxValues budget, for a client reading what
// its executor sent: the budget is the executor's limit on the messages it reads
// (spec/jsonrpc.md §1.3), not one the reference client applies to replies (a directory
// listing of 100,000 entries is one reply). Syntax, duplicate keys and MaxDepth are
// checked as ScanRoot checks them.
func ScanRootUnbudgeted(data []byte, names []string, members []Member) (Root, error) {
	s := getScanner(data, names)
	defer putScanner(s)
	s.unbudgeted = true
	if err := s.scan(); err != nil {
		return Root{}, err
	}
	return Root{Object: s.rootObject, Members: append(members, s.members...), End: s.pos}, nil
}

// ObjectMembers calls fn with each member of the JSON object obj, in document order: its
// key, unescaped (aliasing obj unless it had escapes), and the raw text of its value. It
// stops early when fn returns false, and reports false, calling nothing, when obj is not
// an object. obj must be an object cut from a text that passed Validate, ScanRoot or
// ScanRootUnbudgeted (a Member's span, or a value inside one): nothing here checks syntax,
// and other text may panic. Values decode with String and the other single-value helpers.
func ObjectMembers(obj []byte, fn func(key, value []byte) bool) bool {
	r := reader{data: obj}
	r.skipWS()
	if r.pos >= len(obj) || obj[r.pos] != '{' {
		return false
	}
	r.pos++
	for {
		key, escaped, ok := r.objectNext()
		if !ok {
			return true
		}
		if escaped {
			key = appendUnescaped(make([]byte, 0, len(key)), key)
		}
		if !fn(key, r.skip()) {
			return true
		}
	}
}
