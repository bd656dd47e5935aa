package noise_test

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
// standard library's operations the protocol requires, each measured alone. The
// responder does five X25519 operations (es, ss, its ephemeral's public key, ee, se),
// one ML-KEM decapsulation, two encapsulations and two encapsulation-key parses.
//
//	go test ./noise -run XXX -bench Floor
func BenchmarkFloor_X25519(b *testing.B) {
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

func BenchmarkFloor_X25519PublicKey(b *testing.B) {
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

func BenchmarkFloor_MLKEMParseKey(b *testing.B) {
	dk, _ := mlkem.GenerateKey768()
	ek := dk.EncapsulationKey().Bytes()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := mlkem.NewEncapsulationKey768(ek); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloor_MLKEMEncapsulate(b *testing.B) {
	dk, _ := mlkem.GenerateKey768()
	ek := dk.EncapsulationKey()
	defer reportCPU(b)()
	for b.Loop() {
		ek.Encapsulate()
	}
}

func BenchmarkFloor_MLKEMDecapsulate(b *testing.B) {
	dk, _ := mlkem.GenerateKey768()
	_, ct := dk.EncapsulationKey().Encapsulate()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := dk.Decapsulate(ct); err != nil {
			b.Fatal(err)
		}
	}
}
