package mux

// PooledRefs returns how many pooled record buffers m still counts references on.
func PooledRefs(m *Mux) int {
	m.refs.mu.Lock()
	defer m.refs.mu.Unlock()
	return len(m.refs.n)
}
