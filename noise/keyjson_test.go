package noise_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/execlab/executor/noise"
)

func TestPublicKeyJSON_Roundtrip(t *testing.T) {
	pub := mustIdentity(t).Public()
	b, err := json.Marshal(pub)
	if err != nil {
		t.Fatal(err)
	}
	x := base64.StdEncoding.EncodeToString(pub.X25519[:])
	k := base64.StdEncoding.EncodeToString(pub.MLKEM768[:])
	want := `{"suite":"Noise_hybridIK_X25519+MLKEM768_AESGCM_SHA256","x25519_public_key":"` + x +
		`","mlkem768_public_key":"` + k + `"}`
	if string(b) != want {
		t.Fatalf("JSON = %.120s…, want %.120s…", b, want)
	}
	if len(x) != 44 || len(k) != 1580 {
		t.Fatalf("base64 lengths = %d/%d, want 44/1580", len(x), len(k))
	}
	got, err := noise.ParsePublicKeyJSON(b)
	if err != nil {
		t.Fatalf("ParsePublicKeyJSON: %v", err)
	}
	if got != pub {
		t.Fatal("decoded key differs from original")
	}
	// As a struct member, through encoding/json.
	var wrap struct {
		K noise.PublicKey `json:"k"`
	}
	if err := json.Unmarshal([]byte(`{"k":`+want+`}`), &wrap); err != nil || wrap.K != pub {
		t.Fatalf("nested decode: err %v, equal %v", err, wrap.K == pub)
	}
}

func TestPublicKeyJSON_Rejects(t *testing.T) {
	pub := mustIdentity(t).Public()
	x := base64.StdEncoding.EncodeToString(pub.X25519[:])
	k := base64.StdEncoding.EncodeToString(pub.MLKEM768[:])
	obj := func(suite, x, k string) string {
		return `{"suite":"` + suite + `","x25519_public_key":"` + x + `","mlkem768_public_key":"` + k + `"}`
	}
	badKEM := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xff}, noise.KEMPublicKeyLen))
	for _, tc := range []struct {
		name string
		in   string
		want error
	}{
		{"protocol-name-spelling", obj(noise.ProtocolName, x, k), noise.ErrUnsupportedSuite},
		{"empty-suite", obj("", x, k), noise.ErrUnsupportedSuite},
		{"unknown-member", strings.TrimSuffix(obj(noise.SuiteLabel, x, k), "}") + `,"extra":1}`, noise.ErrInvalidKeyJSON},
		{"missing-mlkem", `{"suite":"` + noise.SuiteLabel + `","x25519_public_key":"` + x + `"}`, noise.ErrInvalidKeyJSON},
		{"null-x25519", `{"suite":"` + noise.SuiteLabel + `","x25519_public_key":null,"mlkem768_public_key":"` + k + `"}`, noise.ErrInvalidKeyJSON},
		{"number-x25519", `{"suite":"` + noise.SuiteLabel + `","x25519_public_key":5,"mlkem768_public_key":"` + k + `"}`, noise.ErrInvalidKeyJSON},
		{"trailing-data", obj(noise.SuiteLabel, x, k) + `{}`, noise.ErrInvalidKeyJSON},
		{"not-object", `[]`, noise.ErrInvalidKeyJSON},
		{"x-unpadded", obj(noise.SuiteLabel, strings.TrimRight(x, "="), k), noise.ErrInvalidX25519},
		{"x-urlsafe", obj(noise.SuiteLabel, base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)), k), noise.ErrInvalidX25519},
		{"x-garbage", obj(noise.SuiteLabel, strings.Repeat("!", 44), k), noise.ErrInvalidX25519},
		{"x-31-bytes", obj(noise.SuiteLabel, base64.StdEncoding.EncodeToString(pub.X25519[:31]), k), noise.ErrInvalidX25519Len},
		{"x-33-bytes", obj(noise.SuiteLabel, base64.StdEncoding.EncodeToString(append(pub.X25519[:], 0)), k), noise.ErrInvalidX25519Len},
		{"x-whitespace", obj(noise.SuiteLabel, " "+x, k), noise.ErrInvalidX25519},
		{"k-short", obj(noise.SuiteLabel, x, base64.StdEncoding.EncodeToString(pub.MLKEM768[:1183])), noise.ErrInvalidMLKEMLen},
		{"k-unpadded", obj(noise.SuiteLabel, x, base64.RawStdEncoding.EncodeToString(pub.MLKEM768[:1183])), noise.ErrInvalidMLKEM},
		{"k-not-canonical-mlkem", obj(noise.SuiteLabel, x, badKEM), noise.ErrInvalidMLKEM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := pub
			err := before.UnmarshalJSON([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if before != pub {
				t.Fatal("failed decode modified the receiver")
			}
			if strings.Contains(err.Error(), k[:40]) || strings.Contains(err.Error(), x[:20]) {
				t.Fatalf("error echoes key material: %v", err)
			}
		})
	}
}

func TestKeys_Redacted(t *testing.T) {
	id := mustIdentity(t)
	pub := id.Public()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("k", "pub", pub, "ptr", &pub, "id", id)
	outs := []string{
		fmt.Sprint(pub), fmt.Sprintf("%v %+v %#v %x %X %s %q", pub, pub, pub, pub, pub, pub, pub),
		fmt.Sprintf("%v %+v %#v %s", id, id, id, id), fmt.Sprintf("%v", &pub),
		logs.String(),
	}
	secrets := []string{
		base64.StdEncoding.EncodeToString(pub.X25519[:])[:16],
		base64.StdEncoding.EncodeToString(pub.MLKEM768[:])[:16],
		fmt.Sprintf("%x", pub.X25519[:8]),
		fmt.Sprintf("%X", pub.X25519[:8]),
		fmt.Sprint(pub.X25519[:4]),
	}
	for _, out := range outs {
		if !strings.Contains(out, noise.SuiteLabel) {
			t.Errorf("rendering %.80q lacks the suite label", out)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("rendering %.80q contains key bytes %q", out, s)
			}
		}
	}
}
