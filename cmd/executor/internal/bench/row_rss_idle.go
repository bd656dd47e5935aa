package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// rss_idle: resident memory of a freshly started executor holding one initialized, idle
// connection, from /proc/PID/status VmRSS, in MiB. Each sample starts its own executor.
// Goal: ours ≤ 20 MiB (absolute; the reference is shown for comparison).

func measureRSSIdle(ctx context.Context, e *Env, side *Side) (float64, error) {
	inst, sess, err := startConnected(ctx, side.Target)
	if err != nil {
		return 0, err
	}
	defer inst.stop()
	defer sess.close()
	if err := sleep(ctx, quick(e, rssSettle, rssSettleQuick)); err != nil {
		return 0, err
	}
	kib, err := vmRSS(inst.pid())
	if err != nil {
		return 0, err
	}
	return float64(kib) / 1024, nil
}

// vmRSS reads VmRSS (KiB) from /proc/PID/status.
func vmRSS(pid int) (int64, error) { return procStatusKiB(pid, "VmRSS") }

// procStatusKiB reads a "Key: N kB" line (VmRSS, VmHWM) from /proc/PID/status, in KiB.
func procStatusKiB(pid int, key string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", key, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), key+":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("reading %s: unexpected line %q", key, sc.Text())
		}
		return strconv.ParseInt(fields[0], 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading %s: %w", key, err)
	}
	return 0, fmt.Errorf("reading %s: no %s line for pid %d", key, key, pid)
}

// resetPeakRSS resets the VmHWM of pid to its current RSS (proc(5), clear_refs value 5;
// needs the same user or root).
func resetPeakRSS(pid int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting peak RSS: %w", err)
	}
	return nil
}
