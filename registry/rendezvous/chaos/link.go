package chaos

import (
	"context"
	"sync"
	"time"

	"github.com/execlab/executor/relay/frame"
)

// frameConn is a relay connection as the proxy uses it (relay/wsconn.Conn in production,
// relay/relaytest pipes in tests): one binary websocket message per frame.
type frameConn interface {
	ReadFrame(ctx context.Context) ([]byte, error)
	WriteFrame(ctx context.Context, b []byte) error
	Close() error
}

// judge decides one frame's fate; the Proxy implements it over its Plan.
type judge func(side Side, data bool, n int) Verdict

// link relays one socket: the client's connection (executor or harness) and the upstream
// one (the rendezvous), a pump and a writer per direction. Owner: the Proxy, whose run
// waits for it; close ends it from any goroutine.
type link struct {
	side     Side
	client   frameConn
	upstream frameConn
	judge    judge
	// observe, when non-nil, sees every frame that decodes (before its verdict); it
	// must not keep the frame.
	observe func(*frame.Frame)

	done chan struct{}
	once sync.Once
}

func newLink(side Side, client, upstream frameConn, j judge) *link {
	return &link{side: side, client: client, upstream: upstream, judge: j, done: make(chan struct{})}
}

// close drops both connections; every goroutine of the link then returns.
func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		_ = l.client.Close()
		_ = l.upstream.Close()
	})
}

// run relays until either connection ends or close is called, and returns after all four
// goroutines have stopped.
func (l *link) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, d := range []struct{ src, dst frameConn }{{l.client, l.upstream}, {l.upstream, l.client}} {
		dl := &direction{link: l, src: d.src, dst: d.dst, notify: make(chan struct{}, 1), space: make(chan struct{}, 1)}
		wg.Add(2)
		go func() { defer wg.Done(); dl.pumpRoutine(ctx) }()
		go func() { defer wg.Done(); dl.writeRoutine(ctx) }()
	}
	wg.Wait()
}

// direction is one way of a link: pumpRoutine reads frames, asks the judge and queues them
// on the delay line; writeRoutine forwards them when due.
type direction struct {
	*link
	src, dst frameConn

	// mu guards q: the pump pushes while the writer pops.
	mu     sync.Mutex
	q      line
	notify chan struct{} // a frame was queued (cap 1)
	space  chan struct{} // a frame left a full line (cap 1)
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// pumpRoutine reads src until it fails; overflow policy: block while the line holds
// LineFrames (TCP back-pressure onto the sender).
func (d *direction) pumpRoutine(ctx context.Context) {
	defer d.close()
	var f frame.Frame
	for {
		b, err := d.src.ReadFrame(ctx)
		if err != nil {
			return
		}
		decoded := frame.Decode(&f, b) == nil
		if decoded && d.observe != nil {
			d.observe(&f)
		}
		data := decoded && frame.KindOf(f.Body) == frame.KindData
		v := d.judge(d.side, data, len(b))
		for range v.Copies {
			if !d.push(b, time.Now().Add(v.Delay)) {
				return
			}
		}
	}
}

// push queues b, waiting for room; false when the link ended meanwhile.
func (d *direction) push(b []byte, due time.Time) bool {
	for {
		d.mu.Lock()
		if d.q.len() < LineFrames {
			d.q.push(b, due)
			d.mu.Unlock()
			signal(d.notify)
			return true
		}
		d.mu.Unlock()
		select {
		case <-d.space:
		case <-d.done:
			return false
		}
	}
}

// writeRoutine forwards due frames to dst in due order until the link ends.
func (d *direction) writeRoutine(ctx context.Context) {
	defer d.close()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d.mu.Lock()
		b, ok := d.q.pop(time.Now())
		due, pending := d.q.next()
		d.mu.Unlock()
		if ok {
			signal(d.space)
			if err := d.dst.WriteFrame(ctx, b); err != nil {
				return
			}
			continue
		}
		var wake <-chan time.Time
		if pending {
			timer.Reset(time.Until(due))
			wake = timer.C
		}
		select {
		case <-d.notify:
		case <-wake:
		case <-d.done:
			return
		}
	}
}
