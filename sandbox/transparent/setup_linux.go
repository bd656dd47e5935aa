package transparent

// The privileged half (needs CAP_NET_ADMIN and CAP_NET_BIND_SERVICE in the sandbox's
// network namespace, which bwrap grants the inner stage only for this): the tun
// device, its addresses and default routes (rtnetlink, RFC 3549), and the resolver's
// socket on 127.0.0.53:53.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// Setup turns the /dev/net/tun descriptor tunFD (opened in this network namespace)
// into the DeviceName device, up, with
// Local4/32 and (when the kernel has IPv6) Local6/128 and a default route for each
// family through it, and returns a UDP socket bound to Resolver. Both descriptors stay
// open in this process (the caller hands them to Start, across an exec if it likes).
// Any failure is returned: the caller must not run the command without capture.
func Setup(tunFD int) (dnsFD int, err error) {
	ifr, err := unix.NewIfreq(DeviceName)
	if err != nil {
		return -1, fmt.Errorf("naming tun device: %w", err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(tunFD, unix.TUNSETIFF, ifr); err != nil {
		return -1, fmt.Errorf("creating tun device %s: %w", DeviceName, err)
	}
	if err := setLinkUp(DeviceName); err != nil {
		return -1, err
	}
	ifi, err := net.InterfaceByName(DeviceName)
	if err != nil {
		return -1, fmt.Errorf("finding tun device: %w", err)
	}
	nl, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return -1, fmt.Errorf("opening rtnetlink: %w", err)
	}
	defer unix.Close(nl)
	families := []netip.Addr{Local4}
	if _, err := os.Stat("/proc/net/if_inet6"); err == nil {
		families = append(families, Local6)
	}
	for _, a := range families {
		if err := nlDo(nl, unix.RTM_NEWADDR, addrMessage(a, ifi.Index)); err != nil {
			return -1, fmt.Errorf("adding address %s: %w", a, err)
		}
		if err := nlDo(nl, unix.RTM_NEWROUTE, routeMessage(a.Is6(), ifi.Index)); err != nil {
			return -1, fmt.Errorf("adding default route through %s: %w", DeviceName, err)
		}
	}
	return listenResolver()
}

// setLinkUp sets IFF_UP on name.
func setLinkUp(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening interface control socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return fmt.Errorf("naming interface: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("reading %s flags: %w", name, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing %s up: %w", name, err)
	}
	return nil
}

// listenResolver binds the resolver's UDP socket (port 53: CAP_NET_BIND_SERVICE).
func listenResolver() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening resolver socket: %w", err)
	}
	sa := &unix.SockaddrInet4{Port: int(Resolver.Port()), Addr: Resolver.Addr().As4()}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("binding resolver to %s: %w", Resolver, err)
	}
	return fd, nil
}

// rtattr appends one netlink attribute (header, data, padding to 4 bytes).
func rtattr(out []byte, typ uint16, data []byte) []byte {
	out = binary.NativeEndian.AppendUint16(out, uint16(unix.SizeofRtAttr+len(data)))
	out = binary.NativeEndian.AppendUint16(out, typ)
	out = append(out, data...)
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	return out
}

// addrMessage is RTM_NEWADDR's body: ifaddrmsg{family, prefixlen, flags, scope,
// index} then IFA_LOCAL, IFA_ADDRESS and (IPv6) IFA_FLAGS NODAD, so the address is
// usable at once.
func addrMessage(a netip.Addr, index int) []byte {
	fam, bits := byte(unix.AF_INET), byte(32)
	if a.Is6() {
		fam, bits = unix.AF_INET6, 128
	}
	b := []byte{fam, bits, 0, unix.RT_SCOPE_UNIVERSE}
	b = binary.NativeEndian.AppendUint32(b, uint32(index))
	b = rtattr(b, unix.IFA_LOCAL, a.AsSlice())
	b = rtattr(b, unix.IFA_ADDRESS, a.AsSlice())
	if a.Is6() {
		b = rtattr(b, unix.IFA_FLAGS, binary.NativeEndian.AppendUint32(nil, unix.IFA_F_NODAD))
	}
	return b
}

// routeMessage is RTM_NEWROUTE's body for a default route out of index: rtmsg{family,
// dst_len 0, src_len, tos, table main, protocol boot, scope, type unicast, flags}
// then RTA_OIF (and RTA_PRIORITY 1 for IPv6, as the reference's "metric 1").
func routeMessage(v6 bool, index int) []byte {
	fam, scope := byte(unix.AF_INET), byte(unix.RT_SCOPE_LINK)
	if v6 {
		fam, scope = unix.AF_INET6, unix.RT_SCOPE_UNIVERSE
	}
	b := []byte{fam, 0, 0, 0, unix.RT_TABLE_MAIN, unix.RTPROT_BOOT, scope, unix.RTN_UNICAST, 0, 0, 0, 0}
	b = rtattr(b, unix.RTA_OIF, binary.NativeEndian.AppendUint32(nil, uint32(index)))
	if v6 {
		b = rtattr(b, unix.RTA_PRIORITY, binary.NativeEndian.AppendUint32(nil, 1))
	}
	return b
}

// nlDo sends one create request and waits for its acknowledgement.
func nlDo(fd int, typ uint16, body []byte) error {
	msg := binary.NativeEndian.AppendUint32(nil, uint32(unix.SizeofNlMsghdr+len(body)))
	msg = binary.NativeEndian.AppendUint16(msg, typ)
	msg = binary.NativeEndian.AppendUint16(msg, unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	msg = binary.NativeEndian.AppendUint32(msg, 1) // seq
	msg = binary.NativeEndian.AppendUint32(msg, 0) // pid: the kernel fills it in
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("sending netlink request: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return fmt.Errorf("reading netlink answer: %w", err)
	}
	for b := buf[:n]; len(b) >= unix.SizeofNlMsghdr; {
		l := int(binary.NativeEndian.Uint32(b))
		if l < unix.SizeofNlMsghdr || l > len(b) {
			break
		}
		if binary.NativeEndian.Uint16(b[4:]) == unix.NLMSG_ERROR && l >= unix.SizeofNlMsghdr+4 {
			if code := int32(binary.NativeEndian.Uint32(b[unix.SizeofNlMsghdr:])); code != 0 {
				return unix.Errno(-code)
			}
			return nil
		}
		if next := (l + 3) &^ 3; next < len(b) {
			b = b[next:]
		} else {
			break
		}
	}
	return errors.New("no netlink acknowledgement")
}
