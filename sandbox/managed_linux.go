package sandbox

// Stage halves of the managed network (spec/sandbox.md §3.10): hostProxy runs in the
// supervising launcher (host network namespace), innerProxy in the inner stage (the
// sandbox's own network namespace, before seccomp).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/transparent"
)

// hostProxy is the launcher's bridge: a private 0700 directory holding one Unix
// socket per distinct proxy port, each connection forwarded to 127.0.0.1:<port>.
// Owned by runBubblewrap, which closes it after bwrap exits.
type hostProxy struct {
	dir  string
	spec routeSpec
	br   *bridge
	// transparent: the sandbox gets /dev/net/tun, the resolv.conf (bound at
	// resolvTarget) and the setup's capabilities (transparent TCP).
	transparent  bool
	resolvTarget string
}

// errTransparentNoSOCKS: transparent TCP without a SOCKS5 route (runBubblewrap reports
// it under msgTransparentPrefix).
var errTransparentNoSOCKS = errors.New(msgTransparentNoSOCKS)

// resolvConfPath is the resolver configuration the sandbox's libc reads.
const resolvConfPath = "/etc/resolv.conf"

// tunDevice is bound into the sandbox for transparent TCP. It must be opened there:
// a tun descriptor belongs to the network namespace it was opened in.
const tunDevice = "/dev/net/tun"

// startHostProxy plans the routes from env and starts the launcher bridge. A
// *proxyRefusal error is a fail-closed row; any other error is a setup failure. Both
// surface as exit 101 under msgProxyBridgePrefix.
func startHostProxy(m *ManagedNetwork, env []string, tmpDir string) (*hostProxy, error) {
	vars, err := planProxyVars(env, m)
	if err != nil {
		return nil, err
	}
	sweepStaleProxyDirs(tmpDir)
	dir, err := makeProxyDir(tmpDir)
	if err != nil {
		return nil, err
	}
	hp := &hostProxy{dir: dir, br: newBridge()}
	sockets := map[uint16]string{}
	for _, v := range vars {
		sock, ok := sockets[v.ep.port]
		if !ok {
			sock = filepath.Join(dir, strconv.Itoa(int(v.ep.port))+".sock")
			ln, err := net.Listen("unix", sock)
			if err != nil {
				hp.close()
				return nil, fmt.Errorf("listening on proxy socket: %w", err)
			}
			target := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(v.ep.port)))
			hp.br.serve(ln, func(ctx context.Context) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", target)
			})
			sockets[v.ep.port] = sock
		}
		hp.spec.Routes = append(hp.spec.Routes, proxyRoute{EnvKey: v.key, SocketPath: sock})
		if m.TransparentTcp && hp.spec.TransparentSocket == "" && v.ep.isSOCKS5() {
			hp.spec.TransparentSocket = sock
		}
	}
	if m.TransparentTcp {
		if err := hp.prepareTransparent(); err != nil {
			hp.close()
			return nil, err
		}
	}
	return hp, nil
}

// makeProxyDir creates $TMPDIR/codex-linux-sandbox-proxy-<pid>-<n> with mode 0700
// (/tmp when TMPDIR is unset, relative, or too long for socket paths). Mkdir never
// follows or reuses an existing name, so a planted path is skipped.
func makeProxyDir(tmpDir string) (string, error) {
	if tmpDir == "" || !filepath.IsAbs(tmpDir) {
		tmpDir = "/tmp"
	}
	name := proxyDirPrefix + strconv.Itoa(os.Getpid()) + "-"
	// Room for "<n>/<port>.sock": n < maxProxyDirAttempts, port ≤ 65535.
	if len(filepath.Join(tmpDir, name))+len("99/65535.sock") > maxSocketPath {
		tmpDir = "/tmp"
	}
	base := filepath.Join(filepath.Clean(tmpDir), name)
	for n := range maxProxyDirAttempts {
		dir := base + strconv.Itoa(n)
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			if err := os.Chmod(dir, 0o700); err != nil { // umask could only narrow it; be exact
				os.Remove(dir)
				return "", fmt.Errorf("creating proxy socket directory: %w", err)
			}
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("creating proxy socket directory: %w", err)
		}
	}
	return "", errors.New("creating proxy socket directory: every name is taken")
}

// sweepStaleProxyDirs removes socket directories left by launchers that died without
// cleaning up (SIGKILL from process/terminate): a directory whose <pid> is not alive,
// owned by this euid, holding only sockets. Anything else is left alone. Best effort.
func sweepStaleProxyDirs(tmpDir string) {
	for _, parent := range []string{tmpDir, "/tmp"} {
		if !filepath.IsAbs(parent) {
			continue
		}
		dirs, _ := filepath.Glob(filepath.Join(filepath.Clean(parent), proxyDirPrefix+"*"))
		for _, d := range dirs {
			pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(d), proxyDirPrefix), "-")
			pid, err := strconv.Atoi(pidText)
			if !ok || err != nil || pid <= 0 || pidAlive(pid) {
				continue
			}
			var st unix.Stat_t
			if unix.Lstat(d, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
				continue
			}
			ents, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if e.Type()&os.ModeSocket != 0 {
					os.Remove(filepath.Join(d, e.Name()))
				}
			}
			os.Remove(d) // fails, and keeps d, unless it is now empty
		}
	}
}

// prepareTransparent opens /dev/net/tun for the inner stage and writes the sandbox's
// resolv.conf (transparent.ResolvConf) into the socket directory. A proxy without a
// SOCKS5 route cannot carry captured connections: fail closed.
func (hp *hostProxy) prepareTransparent() error {
	if hp.spec.TransparentSocket == "" {
		return errTransparentNoSOCKS
	}
	if err := os.WriteFile(hp.resolvConf(), []byte(transparent.ResolvConf), 0o444); err != nil {
		return fmt.Errorf("writing resolv.conf: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Stat(tunDevice, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return fmt.Errorf("transparent TCP needs the tun device %s", tunDevice)
	}
	// A symlinked /etc/resolv.conf (systemd-resolved's stub file) is replaced where it
	// points: bwrap binds through a symlink only onto an existing target, and the
	// profile may not show it. A dangling link stays as it is (bwrap then refuses).
	hp.resolvTarget = resolvConfPath
	if p, err := filepath.EvalSymlinks(resolvConfPath); err == nil {
		hp.resolvTarget = p
	}
	hp.transparent = true
	return nil
}

func (hp *hostProxy) resolvConf() string { return filepath.Join(hp.dir, "resolv.conf") }

// bwrapArgs binds the socket directory read-only at the same path in the sandbox;
// with transparent TCP also the resolv.conf over /etc/resolv.conf and the tun device.
// The command can open the device but not create or attach an interface: that needs
// CAP_NET_ADMIN, and the one device is single-queue and held by the inner stage.
func (hp *hostProxy) bwrapArgs() []string {
	args := []string{"--ro-bind", hp.dir, hp.dir}
	if hp.transparent {
		args = append(args, "--ro-bind", hp.resolvConf(), hp.resolvTarget, "--dev-bind", tunDevice, tunDevice)
	}
	return args
}

// capArgs follow bwrap's --cap-drop ALL: what the inner stage's transparent TCP setup
// needs (runTransparentSetup drops them all before the command starts).
func (hp *hostProxy) capArgs() []string {
	if hp == nil || !hp.transparent {
		return nil
	}
	return []string{"--cap-add", "CAP_NET_ADMIN", "--cap-add", "CAP_NET_BIND_SERVICE", "--cap-add", "CAP_SETPCAP"}
}

// close stops the bridge and removes the socket directory. Nil-safe, idempotent.
func (hp *hostProxy) close() {
	if hp == nil {
		return
	}
	hp.br.close()
	if hp.dir != "" {
		os.RemoveAll(hp.dir)
		hp.dir = ""
	}
}

// innerProxy is the inner stage's bridge: one 127.0.0.1:0 listener per socket, and
// the transparent TCP capture when the launch asked for it.
type innerProxy struct {
	br  *bridge
	cap *transparent.Capture
}

// startInnerProxy brings lo up if needed, listens per route socket, starts the
// transparent capture on tfds (the descriptors runTransparentSetup prepared; nil
// without transparent TCP), and returns env with every routed variable rewritten to
// its local port.
func startInnerProxy(specJSON string, env []string, tfds []int) (*innerProxy, []string, error) {
	spec, err := decodeRouteSpec(specJSON)
	if err != nil {
		return nil, nil, err
	}
	if err := ensureLoopbackUp(); err != nil {
		return nil, nil, err
	}
	ip := &innerProxy{br: newBridge()}
	ports := map[string]int{}
	for _, r := range spec.Routes {
		if _, ok := ports[r.SocketPath]; ok {
			continue
		}
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			ip.close()
			return nil, nil, fmt.Errorf("listening on loopback: %w", err)
		}
		sock := r.SocketPath
		ip.br.serve(ln, func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		})
		ports[sock] = ln.Addr().(*net.TCPAddr).Port
	}
	out, err := rewriteProxyEnv(env, spec, ports)
	if err != nil {
		ip.close()
		return nil, nil, err
	}
	if tfds != nil {
		if spec.TransparentSocket == "" {
			ip.close()
			return nil, nil, errors.New("transparent TCP without a SOCKS5 route")
		}
		sock := spec.TransparentSocket
		ip.cap, err = transparent.Start(tfds[0], tfds[1], func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		})
		if err != nil {
			ip.close()
			return nil, nil, fmt.Errorf("starting transparent TCP: %w", err)
		}
	}
	return ip, out, nil
}

func (ip *innerProxy) close() {
	if ip != nil {
		if ip.cap != nil {
			ip.cap.Close()
		}
		ip.br.close()
	}
}

// ensureLoopbackUp sets IFF_UP on lo unless it is already up (bwrap --unshare-net
// normally configures it; the inner stage holds no capabilities, so setting the flag
// only works where bwrap did not).
func ensureLoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening interface control socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("naming loopback interface: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("reading loopback flags: %w", err)
	}
	flags := ifr.Uint16()
	if flags&unix.IFF_UP != 0 {
		return nil
	}
	ifr.SetUint16(flags | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	return nil
}
