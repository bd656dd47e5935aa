package noise_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/execlab/executor/noise"
)

func TestPrologueVector(t *testing.T) {
	want, _ := hex.DecodeString(strings.Join([]string{
		"0000000000000020", "636f6465782d657865632d7365727665722d72656c61792d6e6f6973652f7631",
		"0000000000000005", "656e762d31",
		"000000000000000e", "726567697374726174696f6e2d31",
		"0000000000000008", "73747265616d2d31",
	}, ""))
	got := noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1")
	if len(got) != 91 {
		t.Fatalf("len = %d, want 91", len(got))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("prologue = %x, want %x", got, want)
	}
	// Appends, does not overwrite.
	if got := noise.AppendPrologue([]byte{1, 2}, "env-1", "registration-1", "stream-1"); !bytes.Equal(got[2:], want) || got[0] != 1 {
		t.Fatalf("AppendPrologue did not append to its out argument")
	}
	// The u32-prefixed variant of earlier reference revisions must differ.
	var u32 []byte
	for _, p := range []string{noise.PrologueDomain, "env-1", "registration-1", "stream-1"} {
		u32 = binary.BigEndian.AppendUint32(u32, uint32(len(p)))
		u32 = append(u32, p...)
	}
	if bytes.Equal(u32, got) {
		t.Fatal("u32 prologue variant equals u64 form")
	}
	if len(noise.PrologueDomain) != 32 {
		t.Fatalf("len(PrologueDomain) = %d, want 32", len(noise.PrologueDomain))
	}
}
