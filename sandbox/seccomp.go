package sandbox

// seccomp program builder (spec/sandbox.md §3.9). Pure: builds a classic BPF program
// for a given architecture table and mode; installing it is seccomp_linux.go.
//
// Layout of struct seccomp_data (linux/seccomp.h), little endian on both arches:
//
//	offset 0  u32 nr
//	offset 4  u32 arch
//	offset 8  u64 instruction_pointer
//	offset 16 u64 args[6]     (args[0] low 32 bits at 16: the kernel reads `domain` as int)
//
// Program:
//
//	ld arch; jeq ARCH ? next : KILL_PROCESS
//	ld nr;   [x86_64] jge 0x40000000 ? ERRNO(EPERM)       (x32 ABI, deviation)
//	         jeq denied_i ? ERRNO(EPERM)                  (per mode)
//	         jeq socket ? SOCKET ; jeq socketpair ? PAIR  (per mode)
//	ret ALLOW
//	SOCKET: ld args[0].lo; domain rules ; PAIR: same
//	        [Restricted, AF_UNIX] ld args[1].lo; and SOCK_TYPE_MASK;
//	        jeq SOCK_STREAM|SOCK_SEQPACKET ? ALLOW : ERRNO
//	ALLOW / ERRNO / KILL returns
//
// Hardening beyond the reference (issue 13): under Restricted, socket(AF_UNIX) is
// allowed only for SOCK_STREAM and SOCK_SEQPACKET. The reference also allows
// SOCK_DGRAM, and with sendmsg (not in the deny list) a datagram then reaches any host
// socket bound at a path the command can see (/dev/log, journald's socket). Stream
// sockets cannot connect (connect is denied); socketpair keeps every type.

import (
	"fmt"

	"github.com/execlab/executor/sandbox/policy"
)

// Classic BPF opcodes (linux/bpf_common.h).
const (
	bpfLD  = 0x00
	bpfJMP = 0x05
	bpfRET = 0x06
	bpfW   = 0x00
	bpfABS = 0x20
	bpfJEQ = 0x10
	bpfJGE = 0x30
	bpfK   = 0x00

	retKillProcess = 0x80000000 // SECCOMP_RET_KILL_PROCESS
	retErrno       = 0x00050000 // SECCOMP_RET_ERRNO
	retAllow       = 0x7fff0000 // SECCOMP_RET_ALLOW
	errnoEPERM     = 1

	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24 // args[1] low 32 bits: socket's `type`
	bpfALU  = 0x04
	bpfAND  = 0x50

	sockStream    = 1          // SOCK_STREAM
	sockSeqpacket = 5          // SOCK_SEQPACKET
	sockTypeMask  = 0xf        // SOCK_TYPE_MASK: strips SOCK_NONBLOCK / SOCK_CLOEXEC
	x32Bit        = 0x40000000 // __X32_SYSCALL_BIT
	afUnix        = 1
	afInet        = 2
	afInet6       = 10
	afVsock       = 40
	maxJump       = 255 // classic BPF conditional jump offsets are u8
)

// Instruction is one classic BPF instruction (struct sock_filter).
type Instruction struct {
	Code   uint16
	Jt, Jf uint8
	K      uint32
}

// archTable names the syscall numbers the filter uses on one architecture.
type archTable struct {
	name      string
	auditArch uint32
	x32       bool // filter the x32 ABI bit
	nr        map[string]uint32
}

var archAMD64 = archTable{name: "amd64", auditArch: 0xc000003e, x32: true, nr: map[string]uint32{
	"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
	"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
	"connect": 42, "accept": 43, "accept4": 288, "bind": 49, "listen": 50,
	"getpeername": 52, "getsockname": 51, "shutdown": 48, "sendto": 44,
	"sendmmsg": 307, "recvmmsg": 299, "getsockopt": 55, "setsockopt": 54,
	"socket": 41, "socketpair": 53,
}}

var archARM64 = archTable{name: "arm64", auditArch: 0xc00000b7, nr: map[string]uint32{
	"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
	"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
	"connect": 203, "accept": 202, "accept4": 242, "bind": 200, "listen": 201,
	"getpeername": 205, "getsockname": 204, "shutdown": 210, "sendto": 206,
	"sendmmsg": 269, "recvmmsg": 243, "getsockopt": 209, "setsockopt": 208,
	"socket": 198, "socketpair": 199,
}}

var (
	deniedProcess = []string{"ptrace", "process_vm_readv", "process_vm_writev"}
	deniedIOURing = []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}
	deniedNetwork = []string{"connect", "accept", "accept4", "bind", "listen", "getpeername",
		"getsockname", "shutdown", "sendto", "sendmmsg", "recvmmsg", "getsockopt", "setsockopt"}
)

// SeccompOptions refine a mode.
type SeccompOptions struct {
	// AllowUnixSockets permits socket(AF_UNIX) under ProxyRouted
	// (managedNetwork.dangerouslyAllowAllUnixSockets).
	AllowUnixSockets bool
}

// BuildSeccompProgram returns the filter for mode on arch ("amd64" or "arm64").
// SeccompNone has no program (nil, nil).
func BuildSeccompProgram(arch string, mode policy.SeccompMode, opts SeccompOptions) ([]Instruction, error) {
	var t archTable
	switch arch {
	case "amd64":
		t = archAMD64
	case "arm64":
		t = archARM64
	default:
		return nil, fmt.Errorf("building seccomp program: unsupported architecture %q", arch)
	}
	var denied []string
	var socketDomain, pairDomain domainRule
	switch mode {
	case policy.SeccompNone:
		return nil, nil
	case policy.SeccompRestricted:
		denied = concat(deniedProcess, deniedIOURing, deniedNetwork)
		socketDomain = domainRule{allow: []uint32{afUnix}, unixTypes: []uint32{sockStream, sockSeqpacket}}
		pairDomain = domainRule{allow: []uint32{afUnix}}
	case policy.SeccompProxyRouted:
		denied = concat(deniedProcess, deniedIOURing)
		socketDomain = domainRule{allow: []uint32{afInet, afInet6}}
		if opts.AllowUnixSockets {
			socketDomain.allow = append(socketDomain.allow, afUnix)
		}
		pairDomain = domainRule{allow: []uint32{afUnix}}
	case policy.SeccompVmSocketRestricted:
		denied = deniedIOURing
		socketDomain = domainRule{deny: []uint32{afVsock}}
		pairDomain = domainRule{deny: []uint32{afVsock}}
	default:
		return nil, fmt.Errorf("building seccomp program: unknown mode %d", mode)
	}

	var a assembler
	a.stmt(bpfLD|bpfW|bpfABS, offArch)
	a.jump(bpfJMP|bpfJEQ|bpfK, t.auditArch, "", "kill")
	a.stmt(bpfLD|bpfW|bpfABS, offNr)
	if t.x32 {
		a.jump(bpfJMP|bpfJGE|bpfK, x32Bit, "errno", "")
	}
	for _, name := range denied {
		a.jump(bpfJMP|bpfJEQ|bpfK, t.nr[name], "errno", "")
	}
	a.jump(bpfJMP|bpfJEQ|bpfK, t.nr["socket"], "socket", "")
	a.jump(bpfJMP|bpfJEQ|bpfK, t.nr["socketpair"], "pair", "")
	a.jump(bpfJMP, 0, "allow", "") // unconditional: ja allow
	a.label("socket")
	socketDomain.emit(&a)
	a.label("pair")
	pairDomain.emit(&a)
	a.label("allow")
	a.stmt(bpfRET|bpfK, retAllow)
	a.label("errno")
	a.stmt(bpfRET|bpfK, retErrno|errnoEPERM)
	a.label("kill")
	a.stmt(bpfRET|bpfK, retKillProcess)
	return a.assemble()
}

// domainRule: with allow set, every other domain is EPERM; with deny set, those are.
// unixTypes, when set (with AF_UNIX in allow), narrows AF_UNIX to those socket types.
type domainRule struct{ allow, deny, unixTypes []uint32 }

func (r domainRule) emit(a *assembler) {
	a.stmt(bpfLD|bpfW|bpfABS, offArg0)
	if r.allow != nil {
		for _, d := range r.allow {
			if d == afUnix && r.unixTypes != nil {
				a.jump(bpfJMP|bpfJEQ|bpfK, d, "unixtype", "")
				continue
			}
			a.jump(bpfJMP|bpfJEQ|bpfK, d, "allow", "")
		}
		a.jump(bpfJMP, 0, "errno", "")
		if r.unixTypes != nil {
			a.label("unixtype")
			a.stmt(bpfLD|bpfW|bpfABS, offArg1)
			a.stmt(bpfALU|bpfAND|bpfK, sockTypeMask)
			for _, ty := range r.unixTypes {
				a.jump(bpfJMP|bpfJEQ|bpfK, ty, "allow", "")
			}
			a.jump(bpfJMP, 0, "errno", "")
		}
		return
	}
	for _, d := range r.deny {
		a.jump(bpfJMP|bpfJEQ|bpfK, d, "errno", "")
	}
	a.jump(bpfJMP, 0, "allow", "")
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// assembler resolves forward labels. A jump with Code == BPF_JMP|BPF_JA uses K as the
// offset; conditional jumps use Jt/Jf ("" = fall through).
type assembler struct {
	prog   []Instruction
	fixups []fixup
	labels map[string]int
}

type fixup struct {
	at         int
	jt, jf, ja string
}

func (a *assembler) stmt(code uint16, k uint32) {
	a.prog = append(a.prog, Instruction{Code: code, K: k})
}

func (a *assembler) jump(code uint16, k uint32, jt, jf string) {
	f := fixup{at: len(a.prog)}
	if code == bpfJMP { // BPF_JA
		f.ja = jt
	} else {
		f.jt, f.jf = jt, jf
	}
	a.fixups = append(a.fixups, f)
	a.prog = append(a.prog, Instruction{Code: code, K: k})
}

func (a *assembler) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.prog)
}

func (a *assembler) assemble() ([]Instruction, error) {
	off := func(from int, name string) (int, error) {
		if name == "" {
			return 0, nil
		}
		to, ok := a.labels[name]
		if !ok || to <= from {
			return 0, fmt.Errorf("building seccomp program: bad label %q", name)
		}
		return to - from - 1, nil
	}
	for _, f := range a.fixups {
		in := &a.prog[f.at]
		if f.ja != "" {
			o, err := off(f.at, f.ja)
			if err != nil {
				return nil, err
			}
			in.K = uint32(o)
			continue
		}
		jt, err := off(f.at, f.jt)
		if err != nil {
			return nil, err
		}
		jf, err := off(f.at, f.jf)
		if err != nil {
			return nil, err
		}
		if jt > maxJump || jf > maxJump {
			return nil, fmt.Errorf("building seccomp program: jump too long")
		}
		in.Jt, in.Jf = uint8(jt), uint8(jf)
	}
	return a.prog, nil
}
