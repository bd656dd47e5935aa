package process

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
)

// SetSpawningHook installs f to run while a start is in the Starting state, before the
// spawn; the returned func restores the previous hook. Not safe to use in parallel tests.
func SetSpawningHook(f func(id string)) (restore func()) {
	old := testHookSpawning
	testHookSpawning = f
	return func() { testHookSpawning = old }
}

// ChildEnv exposes childEnv with an injected server environment.
func ChildEnv(env map[string]string, policy *protocol.ExecEnvPolicy, server []string) map[string]string {
	return childEnv(env, policy, func() []string { return server })
}

// PauseAfterRead exposes the output pump's pause rule and its threshold.
var PauseAfterRead = pauseAfterRead

const FlowingReadBytes = flowingReadBytes

// GlobMatchFold exposes the envPolicy pattern matcher.
var GlobMatchFold = globMatchFold

// OutputLog wraps outputLog for tests.
type OutputLog struct{ l outputLog }

func NewOutputLog(maxBytes, maxChunks int) *OutputLog {
	return &OutputLog{l: newOutputLog(maxBytes, maxChunks)}
}

func (o *OutputLog) Push(seq uint64, data []byte) {
	o.l.push(retainedChunk{seq: seq, stream: protocol.StreamStdout, data: data})
}

func (o *OutputLog) Collect(after uint64, maxBytes int64) []protocol.ProcessOutputChunk {
	return o.l.collect(after, maxBytes)
}

func (o *OutputLog) Len() int   { return o.l.n }
func (o *OutputLog) Bytes() int { return o.l.bytes }

// ResolvePtyProgram exposes the PTY program resolution.
func ResolvePtyProgram(name, cwd string, env map[string]string) (string, error) {
	return resolvePtyProgram(name, cwd, env)
}

// RetainedFootprint returns, for process id, the output bytes its log retains and the
// bytes of memory their backing arrays hold (what the retention really costs).
func (m *Manager) RetainedFootprint(id string) (data, backing int, ok bool) {
	p := m.lookup(id)
	if p == nil {
		return 0, 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := 0; i < p.out.n; i++ {
		c := p.out.at(i)
		data += len(c.data)
		backing += cap(c.data)
	}
	return data, backing, true
}

// ReadBufReusesForTest reports how many pooled read buffers were put back for reuse.
func ReadBufReusesForTest() int64 { return readBufReuses.Load() }

// WaitForTest blocks until cond holds for the budget's used bytes and the number of
// readers queued for it, or ctx ends; it reports whether cond held. Event-driven: it
// re-checks at every change of the budget, never on a timer.
func (b *Budget) WaitForTest(ctx context.Context, cond func(used, queued int) bool) bool {
	for {
		b.mu.Lock()
		if cond(b.used, len(b.queue)) {
			b.mu.Unlock()
			return true
		}
		if b.watch == nil {
			b.watch = make(chan struct{})
		}
		ch := b.watch
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// Queued returns the number of readers queued for the budget.
func (b *Budget) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// ReadBufferSize is the largest single read: the most a reader admitted under the budget
// can take it over by.
const ReadBufferSize = readBufferSize

// BudgetFreeBytes is the unacknowledged output each outputAck process holds outside the
// Budget.
const BudgetFreeBytes = budgetFreeBytes
