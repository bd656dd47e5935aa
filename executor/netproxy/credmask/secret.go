package credmask

import (
	"fmt"
	"log/slog"
)

// Secret is a credential value. It prints as "[REDACTED]" through fmt (%v, %s, %q,
// %#v, %x), slog and encoding/json, so that it cannot reach a log, an error or a
// notification by accident. Reveal returns the value; call it only where the value
// is written into an outgoing request header.
type Secret struct{ v string }

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{v: s} }

const redacted = "[REDACTED]"

// Reveal returns the secret value.
func (s Secret) Reveal() string { return s.v }

// String implements fmt.Stringer with a redaction.
func (Secret) String() string { return redacted }

// GoString implements fmt.GoStringer with a redaction.
func (Secret) GoString() string { return redacted }

// Format implements fmt.Formatter so that every verb is redacted.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue implements slog.LogValuer with a redaction.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON redacts.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText redacts.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
