package sandbox

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/sandbox/policy"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runBPF interprets the subset of classic BPF the builder emits over a seccomp_data.
func runBPF(t *testing.T, prog []Instruction, nr, arch uint32, arg0 uint64, rest ...uint64) uint32 {
	var arg1 uint64
	if len(rest) > 0 {
		arg1 = rest[0]
	}
	t.Helper()
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case bpfLD | bpfW | bpfABS:
			switch in.K {
			case offNr:
				acc = nr
			case offArch:
				acc = arch
			case offArg0:
				acc = uint32(arg0) // low 32 bits, little endian
			case offArg0 + 4:
				acc = uint32(arg0 >> 32)
			case offArg1:
				acc = uint32(arg1)
			default:
				t.Fatalf("load from unexpected offset %d", in.K)
			}
		case bpfALU | bpfAND | bpfK:
			acc &= in.K
		case bpfJMP:
			pc += int(in.K)
		case bpfJMP | bpfJEQ | bpfK:
			if acc == in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case bpfJMP | bpfJGE | bpfK:
			if acc >= in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case bpfRET | bpfK:
			return in.K
		default:
			t.Fatalf("unexpected opcode %#x", in.Code)
		}
	}
	t.Fatal("program fell off the end")
	return 0
}

const eperm = retErrno | errnoEPERM

func TestSeccompProgram_Semantics(t *testing.T) {
	for _, tbl := range []archTable{archAMD64, archARM64} {
		nr := tbl.nr
		tests := []struct {
			mode policy.SeccompMode
			opts SeccompOptions
			sys  string
			arg0 uint64
			want uint32
			arg1 uint64 // socket type; 0 means SOCK_STREAM below
		}{
			{policy.SeccompRestricted, SeccompOptions{}, "connect", 0, eperm, 0},
			{policy.SeccompRestricted, SeccompOptions{}, "socket", afInet, eperm, 0},
			{policy.SeccompRestricted, SeccompOptions{}, "socket", afUnix, retAllow, 0},
			{policy.SeccompRestricted, SeccompOptions{}, "socket", afUnix | 1<<32, retAllow, 0},
			// Hardening: AF_UNIX datagram and raw sockets are refused, flags masked off.
			{policy.SeccompRestricted, SeccompOptions{}, "socket", afUnix, eperm, 2 /* SOCK_DGRAM */},
			{policy.SeccompRestricted, SeccompOptions{}, "socket", afUnix, eperm, 2 | 0x80800 /* DGRAM|CLOEXEC|NONBLOCK */},
			{policy.SeccompRestricted, SeccompOptions{}, "socket", afUnix, eperm, 3 /* SOCK_RAW */},
			{policy.SeccompRestricted, SeccompOptions{}, "socket", afUnix, retAllow, 5 /* SOCK_SEQPACKET */},
			{policy.SeccompRestricted, SeccompOptions{}, "socket", afUnix, retAllow, 1 | 0x80000 /* STREAM|CLOEXEC */},
			{policy.SeccompRestricted, SeccompOptions{}, "socketpair", afUnix, retAllow, 2 /* SOCK_DGRAM */},
			{policy.SeccompRestricted, SeccompOptions{}, "socketpair", afInet, eperm, 0},
			{policy.SeccompRestricted, SeccompOptions{}, "socketpair", afUnix, retAllow, 0},
			{policy.SeccompRestricted, SeccompOptions{}, "ptrace", 0, eperm, 0},
			{policy.SeccompRestricted, SeccompOptions{}, "io_uring_setup", 0, eperm, 0},
			{policy.SeccompRestricted, SeccompOptions{}, "process_vm_readv", 0, eperm, 0},
			{policy.SeccompProxyRouted, SeccompOptions{}, "socket", afInet6, retAllow, 0},
			{policy.SeccompProxyRouted, SeccompOptions{}, "socket", afUnix, eperm, 0},
			{policy.SeccompProxyRouted, SeccompOptions{AllowUnixSockets: true}, "socket", afUnix, retAllow, 0},
			{policy.SeccompProxyRouted, SeccompOptions{}, "socket", afVsock, eperm, 0},
			{policy.SeccompProxyRouted, SeccompOptions{}, "connect", 0, retAllow, 0},
			{policy.SeccompProxyRouted, SeccompOptions{}, "ptrace", 0, eperm, 0},
			{policy.SeccompVmSocketRestricted, SeccompOptions{}, "socket", afVsock, eperm, 0},
			{policy.SeccompVmSocketRestricted, SeccompOptions{}, "socket", afVsock | 1<<32, eperm, 0},
			{policy.SeccompVmSocketRestricted, SeccompOptions{}, "socket", afInet, retAllow, 0},
			{policy.SeccompVmSocketRestricted, SeccompOptions{}, "socketpair", afVsock, eperm, 0},
			{policy.SeccompVmSocketRestricted, SeccompOptions{}, "ptrace", 0, retAllow, 0},
			{policy.SeccompVmSocketRestricted, SeccompOptions{}, "io_uring_enter", 0, eperm, 0},
		}
		for _, tt := range tests {
			prog, err := BuildSeccompProgram(tbl.name, tt.mode, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			arg1 := tt.arg1
			if arg1 == 0 {
				arg1 = 1 // SOCK_STREAM
			}
			if got := runBPF(t, prog, nr[tt.sys], tbl.auditArch, tt.arg0, arg1); got != tt.want {
				t.Errorf("%s %v %s(%#x, %#x): got %#x, want %#x", tbl.name, tt.mode, tt.sys, tt.arg0, arg1, got, tt.want)
			}
			if got := runBPF(t, prog, nr[tt.sys], 0x40000003 /* i386 */, tt.arg0); got != retKillProcess {
				t.Errorf("%s %v foreign arch: got %#x, want KILL_PROCESS", tbl.name, tt.mode, got)
			}
			if got := runBPF(t, prog, 0 /* read/io_setup */, tbl.auditArch, 0); got != retAllow {
				t.Errorf("%s %v syscall 0: got %#x, want ALLOW", tbl.name, tt.mode, got)
			}
		}
		if tbl.x32 {
			prog, _ := BuildSeccompProgram(tbl.name, policy.SeccompVmSocketRestricted, SeccompOptions{})
			if got := runBPF(t, prog, x32Bit|1, tbl.auditArch, 0); got != eperm {
				t.Errorf("%s x32: got %#x, want EPERM", tbl.name, got)
			}
		}
	}
	if prog, err := BuildSeccompProgram("amd64", policy.SeccompNone, SeccompOptions{}); prog != nil || err != nil {
		t.Errorf("SeccompNone: got %v %v, want nil program", prog, err)
	}
	if _, err := BuildSeccompProgram("riscv64", policy.SeccompRestricted, SeccompOptions{}); err == nil {
		t.Errorf("riscv64: got nil error, want unsupported")
	}
}

// TestSeccompProgram_Golden pins every program (seccomp_program_golden). Regenerate
// with `go test ./sandbox -run Golden -update`.
func TestSeccompProgram_Golden(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		for _, mode := range []policy.SeccompMode{policy.SeccompRestricted, policy.SeccompProxyRouted, policy.SeccompVmSocketRestricted} {
			prog, err := BuildSeccompProgram(arch, mode, SeccompOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, in := range prog {
				fmt.Fprintf(&b, "{%#04x, %d, %d, %#08x}\n", in.Code, in.Jt, in.Jf, in.K)
			}
			file := filepath.Join("testdata", "seccomp", arch+"-"+mode.String()+".txt")
			if *update {
				os.MkdirAll(filepath.Dir(file), 0o755)
				if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("reading golden: %v", err)
			}
			if b.String() != string(want) {
				t.Errorf("%s: program differs from golden:\ngot\n%s\nwant\n%s", file, b.String(), want)
			}
		}
	}
}
