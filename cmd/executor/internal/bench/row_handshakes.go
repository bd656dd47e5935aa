package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/execlab/executor/noise"
)

// handshakes: complete hybrid IK handshakes (noise package, in the bench process, no I/O):
// each one creates both roles, runs message 1 (with a 64-byte authorization payload) and
// message 2, splits, and checks that a record sealed by the initiator opens at the
// responder. handshakesPerSample handshakes run on one goroutine per CPU; the sample is
// handshakes per CPU-second of the bench process (getrusage user + system time), i.e. per
// core, so other load on a shared machine does not lower it. No reference column: the
// reference's handshake is not reachable in process. Goal (issue 7): ≥ 2,000.

// handshakePeers are the static identities of one run of the row: generated once, as an
// executor's identity is per process.
type handshakePeers struct {
	initiator, responder *noise.Identity
	responderPub         noise.PublicKey
	prologue             []byte
}

func newHandshakePeers() (*handshakePeers, error) {
	in, err := noise.GenerateIdentity(nil)
	if err != nil {
		return nil, fmt.Errorf("generating identity: %w", err)
	}
	resp, err := noise.GenerateIdentity(nil)
	if err != nil {
		return nil, fmt.Errorf("generating identity: %w", err)
	}
	return &handshakePeers{initiator: in, responder: resp, responderPub: resp.Public(),
		prologue: noise.AppendPrologue(nil, "env-bench", "reg_bench", "0123456789abcdef0123456789abcdef0123")}, nil
}

// handshakeOnce runs one complete handshake and one record each way's check.
func (p *handshakePeers) handshakeOnce(auth []byte) error {
	in, err := noise.NewHandshake(&noise.Config{Initiator: true, Static: p.initiator, RemoteStatic: &p.responderPub, Prologue: p.prologue})
	if err != nil {
		return err
	}
	resp, err := noise.NewHandshake(&noise.Config{Static: p.responder, Prologue: p.prologue})
	if err != nil {
		return err
	}
	msg1, err := in.WriteMessage(nil, auth)
	if err != nil {
		return err
	}
	got, err := resp.ReadMessage(nil, msg1)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, auth) {
		return fmt.Errorf("%w: message 1 payload differs", errDataLoss)
	}
	msg2, err := resp.WriteMessage(nil, nil)
	if err != nil {
		return err
	}
	if _, err := in.ReadMessage(nil, msg2); err != nil {
		return err
	}
	send, _, err := in.Split()
	if err != nil {
		return err
	}
	_, recv, err := resp.Split()
	if err != nil {
		return err
	}
	return checkRecord(send, recv, auth)
}

// checkRecord seals auth as one transport record with send and opens it with recv: the
// two ends of a completed handshake must agree.
func checkRecord(send, recv *noise.CipherState, auth []byte) error {
	ct, err := send.Encrypt(nil, nil, auth)
	if err != nil {
		return err
	}
	pt, err := recv.Decrypt(nil, nil, ct)
	if err != nil {
		return err
	}
	if !bytes.Equal(pt, auth) {
		return fmt.Errorf("%w: transport record differs", errDataLoss)
	}
	return nil
}

func measureHandshakes(ctx context.Context, e *Env, side *Side) (float64, error) {
	peers, err := newHandshakePeers()
	if err != nil {
		return 0, err
	}
	total := quick(e, handshakesPerSample, handshakesPerSampleQuick)
	workers := runtime.GOMAXPROCS(0)
	auth := bytes.Repeat([]byte{'a'}, 64)
	cpu0, err := cpuTime()
	if err != nil {
		return 0, err
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		n := total / workers
		if w < total%workers {
			n++
		}
		wg.Add(1)
		go func() { // owner: measureHandshakes, which waits below
			defer wg.Done()
			for range n {
				if ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				if err := peers.handshakeOnce(auth); err != nil {
					errs[w] = fmt.Errorf("handshake: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	cpu1, err := cpuTime()
	if err != nil {
		return 0, err
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	used := cpu1 - cpu0
	if used <= 0 {
		return 0, errors.New("handshakes: no CPU time measured")
	}
	return float64(total) / used.Seconds(), nil
}

// cpuTime is the user + system CPU time of the whole bench process so far.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("reading CPU time: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
