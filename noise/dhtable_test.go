package noise

import (
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve"
)

// ladder is the reference result: circl's Montgomery ladder, as dh computes it.
func ladder(t *testing.T, priv, pub *dhKey) (dhKey, error) {
	t.Helper()
	var out dhKey
	err := dh(&out, priv, pub)
	return out, err
}

// torsioned returns pub's point plus the low-order point with u-coordinate lowU (on the
// Edwards form), as a u-coordinate: a key with a torsion component, which clamping's
// factor 8 must cancel.
func torsioned(t *testing.T, pub *dhKey, lowU string) dhKey {
	t.Helper()
	var u, lu curve.MontgomeryPoint
	copy(u[:], pub[:])
	lowKey := unhex32(t, lowU)
	copy(lu[:], lowKey[:])
	var p, low, sum curve.EdwardsPoint
	if _, err := p.SetMontgomery(&u, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := low.SetMontgomery(&lu, 0); err != nil {
		t.Fatal(err)
	}
	sum.Add(&p, &low)
	var out curve.MontgomeryPoint
	out.SetEdwards(&sum)
	return dhKey(out)
}

// TestDHTable_MatchesLadder: a prepared key gives exactly the ladder's X25519 result (and
// crypto/ecdh's) for random scalars: for random public keys, for keys with a torsion
// component of order 2, 4 and 8, and with the ignored top bit set; random u-coordinates
// either get a table that agrees or none (a point on the twist, left to the ladder),
// about half each; low-order keys get none.
func TestDHTable_MatchesLadder(t *testing.T) {
	var keys []dhKey
	for range 40 {
		var priv, pub dhKey
		rand.Read(priv[:])
		dhPublicKey(&pub, &priv)
		keys = append(keys, pub)
		for _, low := range []string{
			"0000000000000000000000000000000000000000000000000000000000000000", // order 2
			"0100000000000000000000000000000000000000000000000000000000000000", // order 4
			"e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800", // order 8
		} {
			keys = append(keys, torsioned(t, &pub, low))
		}
		top := pub
		top[31] |= 0x80
		keys = append(keys, top)
	}
	for i, pub := range keys {
		tbl := newDHTable(&pub)
		if tbl == nil {
			t.Fatalf("key %d (%x): no table for a point on the curve", i, pub)
		}
		for range 5 {
			var priv dhKey
			rand.Read(priv[:])
			want, wantErr := ladder(t, &priv, &pub)
			var got dhKey
			if err := tbl.dh(&got, &priv); err != nil || wantErr != nil || got != want {
				t.Fatalf("key %d: table %x (%v), ladder %x (%v)", i, got, err, want, wantErr)
			}
			if i%5 == 0 { // a plain key: crypto/ecdh agrees as well
				std, _ := ecdh.X25519().NewPrivateKey(priv[:])
				stdPub, _ := ecdh.X25519().NewPublicKey(pub[:])
				if s, err := std.ECDH(stdPub); err != nil || string(s) != string(got[:]) {
					t.Fatalf("key %d: crypto/ecdh %x (%v), table %x", i, s, err, got)
				}
			}
		}
	}
	tables, twist := 0, 0
	for range 400 {
		var pub, priv dhKey
		rand.Read(pub[:])
		rand.Read(priv[:])
		tbl := newDHTable(&pub)
		if tbl == nil {
			twist++
			continue
		}
		tables++
		want, wantErr := ladder(t, &priv, &pub)
		var got dhKey
		if err := tbl.dh(&got, &priv); err != nil || wantErr != nil || got != want {
			t.Fatalf("random u %x: table %x (%v), ladder %x (%v)", pub, got, err, want, wantErr)
		}
	}
	if tables < 120 || twist < 120 {
		t.Fatalf("%d random u-coordinates got a table, %d none; want about half each", tables, twist)
	}
	for _, low := range []string{
		"0000000000000000000000000000000000000000000000000000000000000000",
		"0100000000000000000000000000000000000000000000000000000000000000",
		"e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
		"5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	} {
		pub := unhex32(t, low)
		if tbl := newDHTable(&pub); tbl != nil {
			var priv, got dhKey
			rand.Read(priv[:])
			if err := tbl.dh(&got, &priv); !errors.Is(err, ErrInvalidKey) || got != (dhKey{}) {
				t.Fatalf("low-order %s: table result %x, %v; want a rejection", low, got, err)
			}
		}
	}
}

func BenchmarkFloor_X25519Table(b *testing.B) {
	var priv, pub, shared dhKey
	rand.Read(priv[:])
	dhPublicKey(&pub, &priv)
	tbl := newDHTable(&pub)
	rand.Read(priv[:])
	defer reportCPU(b)()
	for b.Loop() {
		if err := tbl.dh(&shared, &priv); err != nil {
			b.Fatal(err)
		}
	}
}
