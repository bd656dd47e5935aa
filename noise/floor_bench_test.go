package noise

import (
	"crypto/ecdh"
	"crypto/mlkem"
	"crypto/rand"
	"syscall"
	"testing"
	"time"
)

// reportCPU adds the metric cpu-ns/op: the process's user + system time per iteration
// (getrusage), which a shared machine inflates far less than wall time. Call it
// deferred at the start of the benchmark.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The floor of a responder handshake (docs/bench.md, handshakes_responder): the
// asymmetric operations the protocol requires, each measured alone through the
// primitive seam (primitives.go), and the standard library's for comparison
// (BenchmarkStdlib_*). A responder with a cached peer does four X25519 operations (es,
// its ephemeral's public key, ee, se), one ML-KEM decapsulation, two encapsulations and
// one encapsulation-key parse (the initiator's ephemeral).
//
//	go test ./noise -run XXX -bench 'Floor|Stdlib'
func BenchmarkFloor_X25519(b *testing.B) {
	var priv, peer, shared dhKey
	rand.Read(priv[:])
	rand.Read(peer[:])
	defer reportCPU(b)()
	for b.Loop() {
		if err := dh(&shared, &priv, &peer); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloor_X25519PublicKey(b *testing.B) {
	var priv, pub dhKey
	rand.Read(priv[:])
	defer reportCPU(b)()
	for b.Loop() {
		dhPublicKey(&pub, &priv)
	}
}

func benchKEMKey(b *testing.B) (*kemDecapsulationKey, []byte) {
	seed := make([]byte, KEMSeedLen)
	rand.Read(seed)
	dk, ek, err := newKEMKeyPair(seed)
	if err != nil {
		b.Fatal(err)
	}
	var enc [KEMPublicKeyLen]byte
	packKEM(&enc, ek)
	return dk, enc[:]
}

func BenchmarkFloor_MLKEMParseKey(b *testing.B) {
	_, enc := benchKEMKey(b)
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := parseKEM(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloor_MLKEMEncapsulate(b *testing.B) {
	_, enc := benchKEMKey(b)
	ek, _ := parseKEM(enc)
	var ct [KEMCiphertextLen]byte
	var ss [kemSharedLen]byte
	defer reportCPU(b)()
	for b.Loop() {
		if err := encapsulate(&ct, &ss, ek, new([kemEncapsulationSeedLen]byte), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloor_MLKEMDecapsulate(b *testing.B) {
	dk, enc := benchKEMKey(b)
	ek, _ := parseKEM(enc)
	var ct [KEMCiphertextLen]byte
	var ss [kemSharedLen]byte
	_ = encapsulate(&ct, &ss, ek, new([kemEncapsulationSeedLen]byte), nil)
	defer reportCPU(b)()
	for b.Loop() {
		if err := decapsulate(&ss, dk, ct[:]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlib_X25519(b *testing.B) {
	priv, _ := ecdh.X25519().GenerateKey(rand.Reader)
	peer, _ := ecdh.X25519().GenerateKey(rand.Reader)
	pub := peer.PublicKey()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := priv.ECDH(pub); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlib_X25519PublicKey(b *testing.B) {
	var seed [32]byte
	rand.Read(seed[:])
	defer reportCPU(b)()
	for b.Loop() {
		k, err := ecdh.X25519().NewPrivateKey(seed[:])
		if err != nil {
			b.Fatal(err)
		}
		_ = k.PublicKey().Bytes()
	}
}

func BenchmarkStdlib_MLKEMParseKey(b *testing.B) {
	dk, _ := mlkem.GenerateKey768()
	ek := dk.EncapsulationKey().Bytes()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := mlkem.NewEncapsulationKey768(ek); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlib_MLKEMEncapsulate(b *testing.B) {
	dk, _ := mlkem.GenerateKey768()
	ek := dk.EncapsulationKey()
	defer reportCPU(b)()
	for b.Loop() {
		ek.Encapsulate()
	}
}

func BenchmarkStdlib_MLKEMDecapsulate(b *testing.B) {
	dk, _ := mlkem.GenerateKey768()
	_, ct := dk.EncapsulationKey().Encapsulate()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := dk.Decapsulate(ct); err != nil {
			b.Fatal(err)
		}
	}
}
