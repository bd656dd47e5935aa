package conformance_test

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"sync"
)

// blockVars are the large fs/writeBlock chunks scenarios name instead of spelling out
// (fs_write_block_large.json): a request of 1.4 MB is read in many pieces, which is where
// the server decodes a chunk while its request arrives (executor/protocol
// WriteBlockArrival). Each is the base64 text of seeded pseudo-random bytes:
//
//	${BLOCK1M}          1 MiB, the largest valid block
//	${BLOCK1M_BADEND}   the same with its last data symbol replaced by '!'
//	${BLOCK1M_PLUS3}    1 MiB + 3 bytes: one block too long
//	${BLOCK64K}         64 KiB
//	${BLOCK64K_ESC}     64 KiB with its first '/' written as the JSON escape \/
//	${BLOCK64K_NL}      64 KiB with a \n escape in the middle
var blockVars = sync.OnceValue(func() map[string]string {
	data := make([]byte, 1<<20+3)
	rand.NewChaCha8([32]byte{'b', 'l', 'k'}).Read(data)
	enc := base64.StdEncoding.EncodeToString
	full := enc(data[:1<<20])
	small := enc(data[:64<<10])
	bad := []byte(full)
	bad[len(bad)-3] = '!'
	return map[string]string{
		"${BLOCK1M}":        full,
		"${BLOCK1M_BADEND}": string(bad),
		"${BLOCK1M_PLUS3}":  enc(data),
		"${BLOCK64K}":       small,
		"${BLOCK64K_ESC}":   strings.Replace(small, "/", `\/`, 1),
		"${BLOCK64K_NL}":    small[:40000] + `\n` + small[40000:],
	}
})
