package bench

import (
	"math"
	"sort"
	"time"
)

// Stats summarises the samples of one side of one row.
type Stats struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// Samples are the measured values in run order (warm-up excluded).
	Samples []float64 `json:"samples"`
}

// summarize returns the stats of samples (which must not be empty).
func summarize(samples []float64) Stats {
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	return Stats{Median: median(s), Min: s[0], Max: s[len(s)-1], Samples: samples}
}

// median of sorted values; the mean of the middle two for an even count.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// medianLatency runs one measured operation oneshotPerSample times (oneshotPerSampleQuick
// with --quick), one after another, and returns the median in milliseconds. once returns
// the operation's latency, or an error that ends the sample.
func medianLatency(e *Env, once func() (time.Duration, error)) (float64, error) {
	n := quick(e, oneshotPerSample, oneshotPerSampleQuick)
	lat := make([]float64, 0, n)
	for range n {
		d, err := once()
		if err != nil {
			return 0, err
		}
		lat = append(lat, float64(d)/float64(time.Millisecond))
	}
	sort.Float64s(lat)
	return median(lat), nil
}
