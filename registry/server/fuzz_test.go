package server_test

import (
	"strings"
	"testing"

	"github.com/execlab/executor/registry/server"
)

func FuzzParseTokens(f *testing.F) {
	f.Add("tok")
	f.Add("tok roles=executor,harness envs=*")
	f.Fuzz(func(t *testing.T, in string) {
		_, err := server.ParseTokens(strings.NewReader(in))
		if err != nil && len(in) > 8 && strings.Contains(err.Error(), in) {
			t.Fatalf("error echoes the input: %v", err)
		}
	})
}
