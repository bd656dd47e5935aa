package initiator

import (
	"testing"

	"go.uber.org/goleak"
)

// maxRecordLen is the largest sealed Noise record (noise/channel.MaxRecordLen: 61,440
// plaintext bytes + a 16-byte tag), spelled out because the relay does not import noise.
const maxRecordLen = 61440 + 16

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
