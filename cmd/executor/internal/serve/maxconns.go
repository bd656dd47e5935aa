package serve

// maxConnsFor derives the connection cap from the soft RLIMIT_NOFILE (0 = unknown).
func maxConnsFor(nofile uint64) int {
	if nofile == 0 {
		return DefaultMaxConns
	}
	n := nofile / FDShareForConns
	switch {
	case n < MinMaxConns:
		return MinMaxConns
	case n > DefaultMaxConns:
		return DefaultMaxConns
	}
	return int(n)
}
