package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// describeMachine returns a one-line description of the machine the numbers come from:
// CPU model (/proc/cpuinfo), usable CPUs and total memory (/proc/meminfo). Unknown parts
// are left out.
func describeMachine() string {
	parts := []string{runtime.GOOS + "/" + runtime.GOARCH}
	if model := procField("/proc/cpuinfo", "model name"); model != "" {
		parts = append(parts, model)
	}
	parts = append(parts, fmt.Sprintf("%d CPUs", runtime.NumCPU()))
	if mem := procField("/proc/meminfo", "MemTotal"); mem != "" {
		var kib int64
		if _, err := fmt.Sscanf(mem, "%d kB", &kib); err == nil {
			parts = append(parts, fmt.Sprintf("%.1f GiB RAM", float64(kib)/(1<<20)))
		}
	}
	return strings.Join(parts, ", ")
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
