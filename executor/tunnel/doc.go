// Package tunnel serves port tunnels on the executor: the tunnel/open request and the
// tunnel/data, tunnel/ack, tunnel/eof and tunnel/close notifications of one JSON-RPC
// connection (docs/protocol-extensions.md, "Port tunnels"; capability tcpTunnel).
//
// Layers: above it, package executor binds tunnel/open to the method table and hands the
// tunnel/* notifications to Table.HandleNotification from the JSON-RPC read loop; below
// it, the TCP sockets it dials. It knows nothing of the relay, Noise or sessions: the
// tunnels of a connection die with it (a resumed session starts with none), like fs/open
// handles.
//
// What it owns:
//
//   - the destination policy (Policy, `--tunnel-allow`): which HOST|CIDR:PORT[-PORT] an
//     open may reach; loopback only by default;
//   - per connection id, one socket with two goroutines, routineRead (socket → peer) and
//     routineWrite (peer → socket), and end-to-end flow control: each side advertises a
//     receive window in tunnel/open and its result; a sender keeps at most that many
//     bytes unacknowledged, a receiver acknowledges (tunnel/ack) what it has written to
//     its socket. So a slow destination back-pressures the client and a slow client
//     back-pressures the destination; no buffer exceeds the window.
//   - half-close: a FIN read from the socket becomes tunnel/eof; a tunnel/eof received
//     becomes CloseWrite once the data before it is written. When both directions have
//     ended the socket is closed and tunnel/close{} (no reason) tells the peer.
//
// Queues: the receive buffer of a connection is bounded by its window (Options.Window);
// data beyond it is a protocol violation that resets that connection (tunnel/close with a
// reason), not the JSON-RPC connection. Sending blocks on credit and then on the JSON-RPC
// outbound queue (Notifier.Notify), never drops.
//
// Concurrency: Table's methods are safe for concurrent use. HandleNotification never
// blocks (it runs on the read loop). Lock order: Table.mu before conn.mu; neither is held
// while calling the Notifier or the socket.
package tunnel
