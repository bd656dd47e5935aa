package jsonwire_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/execlab/executor/jsonwire"
)

// rawString keeps the raw JSON of a value handed to it whole.
type rawString struct{ raw string }

func (r *rawString) UnmarshalJSON(b []byte) error { r.raw = string(b); return nil }

// TestUnmarshalCheckedParamsKnown: a known string body hands its string to an Unmarshaler
// whole; a known that is not a string's body between quotes is ignored, so the result
// is always UnmarshalCheckedParams'.
func TestUnmarshalCheckedParamsKnown(t *testing.T) {
	body := strings.Repeat("QUJD", 5000)
	raw := json.RawMessage(`{"a":"x","chunk":"` + body + `","b":1}`)
	start := strings.Index(string(raw), body)
	type params struct {
		A     string    `json:"a"`
		Chunk rawString `json:"chunk"`
		B     int       `json:"b"`
	}
	var want params
	if err := jsonwire.UnmarshalCheckedParams(raw, &want); err != nil {
		t.Fatal(err)
	}
	for _, known := range []jsonwire.KnownString{
		{Start: start, End: start + len(body)},     // the chunk's body
		{Start: start + 1, End: start + len(body)}, // not at an opening quote: ignored
		{Start: start, End: start + len(body) - 1}, // not at a closing quote: ignored
		{Start: 0, End: 3},                         // out of place: ignored
		{Start: start, End: len(raw) + 5},          // out of range: ignored
		{},
	} {
		var got params
		if err := jsonwire.UnmarshalCheckedParamsKnown(raw, &got, known); err != nil {
			t.Fatalf("known %+v: %v", known, err)
		}
		if got != want {
			t.Fatalf("known %+v: got a=%q chunk %d bytes b=%d, want a=%q chunk %d bytes b=%d", known, got.A, len(got.Chunk.raw), got.B, want.A, len(want.Chunk.raw), want.B)
		}
	}
}
