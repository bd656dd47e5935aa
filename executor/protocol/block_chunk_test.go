package protocol_test

import (
	"fmt"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// BlockChunk decodes every chunk as jsonwire.Bytes does, data and error text alike: the
// pooled path for plain strings, the general one for escapes, other types and errors.
func TestBlockChunk_MatchesBytes(t *testing.T) {
	for _, raw := range []string{`"QUJD"`, `"\u0051UJD"`, `"QU\/D"`, `"!!!!"`, `"QUJ"`, `"QUJDRA=="`, `"QUJDRA"`, `""`, `12`, `"QUJD\"`, `null`} {
		var c protocol.BlockChunk
		var b jsonwire.Bytes
		cerr, berr := c.UnmarshalJSON([]byte(raw)), b.UnmarshalJSON([]byte(raw))
		if fmt.Sprint(cerr) != fmt.Sprint(berr) || string(c.Data) != string(b) {
			t.Errorf("%s: BlockChunk %q, %v; Bytes %q, %v", raw, c.Data, cerr, b, berr)
		}
		c.Release()
	}
}
