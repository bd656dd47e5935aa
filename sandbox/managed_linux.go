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
)

// hostProxy is the launcher's bridge: a private 0700 directory holding one Unix
// socket per distinct proxy port, each connection forwarded to 127.0.0.1:<port>.
// Owned by runBubblewrap, which closes it after bwrap exits.
type hostProxy struct {
	dir  string
	spec routeSpec
	br   *bridge
}

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

// bwrapArgs binds the socket directory read-only at the same path in the sandbox.
func (hp *hostProxy) bwrapArgs() []string { return []string{"--ro-bind", hp.dir, hp.dir} }

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

// innerProxy is the inner stage's bridge: one 127.0.0.1:0 listener per socket.
type innerProxy struct{ br *bridge }

// startInnerProxy brings lo up if needed, listens per route socket, and returns env
// with every routed variable rewritten to its local port.
func startInnerProxy(specJSON string, env []string) (*innerProxy, []string, error) {
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
	return ip, out, nil
}

func (ip *innerProxy) close() {
	if ip != nil {
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
