package arq_test

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/execlab/executor/relay/arq"
)

// faults is the randomness of a simulated link: each packet takes the next byte. When the
// bytes run out the link is perfect, so every simulation ends.
type faults struct {
	b []byte
	i int
}

func (f *faults) next() byte {
	if f.i >= len(f.b) {
		return 0
	}
	f.i++
	return f.b[f.i-1]
}

type packet struct {
	at        time.Time
	ack       bool // an ack (receiver → sender), else a record (sender → receiver)
	seq       uint32
	payload   []byte
	ackv, bit uint32
}

// simulate sends n records of distinct payloads through a Sender, a lossy link (per packet
// byte v: v%16==1 drop, ==2 duplicate, ==3 delay by v ms extra, else 1 ms) and a Receiver,
// whose acks travel back over the same kind of link, driven by the state machines'
// deadlines on a virtual clock. It returns an error unless every record is delivered once,
// in order, byte for byte, the window bounds hold throughout, and everything is
// acknowledged within the virtual time limit.
func simulate(n int, f *faults, limit time.Duration) error {
	var (
		snd   arq.Sender
		rcv   arq.Receiver
		now   = time.Unix(1_000_000, 0)
		start = now
		net   []packet
		got   [][]byte
		ready [][]byte
		sent  int
	)
	payload := func(i int) []byte { return fmt.Appendf(nil, "record %d %s", i, bytes.Repeat([]byte{'x'}, i%7*9000)) }
	transmit := func(p packet) {
		v := f.next()
		switch v % 16 {
		case 1:
			return
		case 2:
			net = append(net, p)
		}
		delay := time.Millisecond
		if v%16 == 3 {
			delay += time.Duration(v) * time.Millisecond
		}
		p.at = now.Add(delay)
		net = append(net, p)
	}
	sendAck := func() {
		a, b := rcv.Ack()
		rcv.AckSent()
		transmit(packet{ack: true, ackv: a, bit: b})
	}
	for steps := 0; ; steps++ {
		if now.Sub(start) > limit || steps > 1_000_000 {
			return fmt.Errorf("not done after %v (%d steps): delivered %d of %d, retained %v", now.Sub(start), steps, len(got), n, fmt.Sprint(snd.Retained()))
		}
		// The application writes whenever the window has room.
		for sent < n && snd.Room(len(payload(sent))) {
			p := payload(sent)
			if err := snd.Sent(uint32(sent), p, now); err != nil {
				return fmt.Errorf("Sent %d: %w", sent, err)
			}
			transmit(packet{seq: uint32(sent), payload: p})
			sent++
		}
		if recs, b := snd.Retained(); recs > arq.Window || (recs > 1 && b > arq.WindowBytes) {
			return fmt.Errorf("window exceeded: %d records, %d bytes", recs, b)
		}
		for _, r := range snd.Due(nil, now) {
			transmit(packet{seq: r.Seq, payload: r.Payload})
		}
		if rcv.AckDue(now) {
			sendAck()
		}
		if recs, _ := snd.Retained(); len(got) == n && recs == 0 {
			return nil
		}
		// Deliver what is due, in arrival order.
		slices.SortStableFunc(net, func(a, b packet) int { return a.at.Compare(b.at) })
		next := now.Add(time.Hour)
		if len(net) > 0 {
			next = net[0].at
		}
		if t, ok := snd.Deadline(); ok && t.Before(next) {
			next = t
		}
		if t, ok := rcv.AckDeadline(); ok && t.Before(next) {
			next = t
		}
		if next.After(now) {
			now = next
		}
		for len(net) > 0 && !net[0].at.After(now) {
			p := net[0]
			net = net[1:]
			if p.ack {
				if _, err := snd.OnAck(p.ackv, p.bit, now); err != nil {
					return fmt.Errorf("OnAck(%d, %b): %w", p.ackv, p.bit, err)
				}
				continue
			}
			var err error
			ready, err = rcv.Receive(ready[:0], p.seq, p.payload, now)
			if err != nil {
				return fmt.Errorf("Receive %d: %w", p.seq, err)
			}
			for _, r := range ready {
				if want := payload(len(got)); !bytes.Equal(r, want) {
					return fmt.Errorf("record %d delivered as %.20q", len(got), r)
				}
				got = append(got, r)
			}
			if rcv.Buffered() > arq.Window {
				return fmt.Errorf("receiver buffers %d records", rcv.Buffered())
			}
		}
	}
}
