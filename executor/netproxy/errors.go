package netproxy

import (
	"encoding/json"
	"fmt"
)

// errorf is fmt.Errorf without wrapping: config texts are sent verbatim to the client.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func jsonMarshalString(s string) ([]byte, error) { return json.Marshal(s) }
