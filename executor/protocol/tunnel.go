package protocol

import (
	"strconv"

	"github.com/execlab/executor/jsonwire"
)

// Port tunnels: an extension of this executor (docs/protocol-extensions.md, capability
// tcpTunnel). Released executors have none of these methods and released clients never
// send them.
//
// Protocol flow, per connection id chosen by the client:
//
//	→ tunnel/open {connId,host,port,window}      request; executor checks --tunnel-allow, dials
//	← {status:"opened",window}                    or refused / failed with a message
//	↔ tunnel/data {connId,data}                   notification, ≤ TunnelMaxChunk bytes, within the peer's window
//	↔ tunnel/ack  {connId,bytes}                  notification: bytes consumed by the receiver (credit back)
//	↔ tunnel/eof  {connId}                        notification: FIN, no more data from the sender
//	↔ tunnel/close {connId,reason?}               notification: the connection is gone (both directions)
const (
	MethodTunnelOpen  = "tunnel/open"
	MethodTunnelData  = "tunnel/data"
	MethodTunnelAck   = "tunnel/ack"
	MethodTunnelEOF   = "tunnel/eof"
	MethodTunnelClose = "tunnel/close"
)

// TunnelMaxChunk is the largest data member of one tunnel/data, in bytes. 128 KiB
// measured 220 MiB/s on tunnel_stream where 64 KiB gave 155 (executor bench, loaded
// 2-core machine): the per-message costs (JSON envelope, parse, dispatch) halve.
const TunnelMaxChunk = 128 << 10

// TunnelOpenParams is the params of tunnel/open.
type TunnelOpenParams struct {
	ConnID uint64 `json:"connId"`
	Host   string `json:"host"`
	Port   uint16 `json:"port"`
	// Window is the client's receive window in bytes: the executor has at most this many
	// bytes of tunnel/data unacknowledged towards the client.
	Window uint64 `json:"window"`
}

// TunnelOpenStatus is the outcome of tunnel/open.
type TunnelOpenStatus string

const (
	TunnelOpened  TunnelOpenStatus = "opened"
	TunnelRefused TunnelOpenStatus = "refused" // the executor's --tunnel-allow policy
	TunnelFailed  TunnelOpenStatus = "failed"  // the dial failed (refused, unreachable, timeout)
	TunnelInUse   TunnelOpenStatus = "connIdInUse"
)

// TunnelOpenResult is the result of tunnel/open.
type TunnelOpenResult struct {
	Status TunnelOpenStatus `json:"status"`
	// Window is the executor's receive window (opened only).
	Window uint64 `json:"window,omitempty"`
	// Message says why (refused, failed).
	Message string `json:"message,omitempty"`
}

// TunnelDataParams is the params of tunnel/data.
type TunnelDataParams struct {
	ConnID uint64         `json:"connId"`
	Data   jsonwire.Bytes `json:"data"`
}

// AppendJSON appends {"connId":…,"data":…} to b.
func (p *TunnelDataParams) AppendJSON(b []byte) []byte {
	b = append(b, `{"connId":`...)
	b = strconv.AppendUint(b, p.ConnID, 10)
	b = append(b, `,"data":`...)
	b = p.Data.AppendJSON(b)
	return append(b, '}')
}

// TunnelAckParams is the params of tunnel/ack.
type TunnelAckParams struct {
	ConnID uint64 `json:"connId"`
	Bytes  uint64 `json:"bytes"`
}

// AppendJSON appends {"connId":…,"bytes":…} to b.
func (p *TunnelAckParams) AppendJSON(b []byte) []byte {
	b = append(b, `{"connId":`...)
	b = strconv.AppendUint(b, p.ConnID, 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendUint(b, p.Bytes, 10)
	return append(b, '}')
}

// TunnelEOFParams is the params of tunnel/eof.
type TunnelEOFParams struct {
	ConnID uint64 `json:"connId"`
}

// TunnelCloseParams is the params of tunnel/close. Reason is empty after an orderly end.
type TunnelCloseParams struct {
	ConnID uint64 `json:"connId"`
	Reason string `json:"reason,omitempty"`
}

// Remote listeners (capability tcpTunnelListen; docs/protocol-extensions.md, "Remote
// listeners"): the executor listens on its host and each accepted connection becomes a
// tunnel with an executor-chosen connId, using the data path above.
//
//	→ tunnel/listen {listenerId,host,port,window} request; executor checks --tunnel-listen-allow, binds
//	← {status:"listening",port,address}          or refused / failed with a message
//	← tunnel/accepted {listenerId,connId,peer,window}  notification: a new tunnel
//	→ tunnel/unlisten {listenerId}                request: stop accepting (accepted tunnels stay)
const (
	MethodTunnelListen   = "tunnel/listen"
	MethodTunnelAccepted = "tunnel/accepted"
	MethodTunnelUnlisten = "tunnel/unlisten"
)

// TunnelAcceptedIDBase is the first connId the executor chooses for accepted
// connections; ids from it up are the executor's, below it the client's (2^52: exact in
// a float64, far above any client counter).
const TunnelAcceptedIDBase uint64 = 1 << 52

// TunnelListenParams is the params of tunnel/listen.
type TunnelListenParams struct {
	// ListenerID is chosen by the client, unique among its listeners on this connection
	// (so the client knows it before any tunnel/accepted, and can unlisten an abandoned
	// request).
	ListenerID uint64 `json:"listenerId"`
	Host       string `json:"host"`
	// Port 0 asks for an ephemeral port (returned in the result).
	Port uint16 `json:"port"`
	// Window is the client's receive window for every accepted connection (0: 2 MiB).
	Window uint64 `json:"window"`
}

// Statuses of tunnel/listen (besides refused and failed).
const (
	TunnelListening     TunnelOpenStatus = "listening"
	TunnelListenerInUse TunnelOpenStatus = "listenerIdInUse"
)

// TunnelListenResult is the result of tunnel/listen.
type TunnelListenResult struct {
	Status TunnelOpenStatus `json:"status"`
	// Port is the bound port (the chosen one for port 0); Address the bound address.
	Port    uint16 `json:"port,omitempty"`
	Address string `json:"address,omitempty"`
	Message string `json:"message,omitempty"`
}

// TunnelAcceptedParams is the params of tunnel/accepted.
type TunnelAcceptedParams struct {
	ListenerID uint64 `json:"listenerId"`
	ConnID     uint64 `json:"connId"`
	// Peer is the accepted connection's remote address on the executor's host.
	Peer string `json:"peer"`
	// Window is the executor's receive window for this connection.
	Window uint64 `json:"window"`
}

// TunnelUnlistenParams is the params of tunnel/unlisten.
type TunnelUnlistenParams struct {
	ListenerID uint64 `json:"listenerId"`
}

// TunnelUnlistenResult is the result of tunnel/unlisten: Closed is false for an id that
// is not listening.
type TunnelUnlistenResult struct {
	Closed bool `json:"closed"`
}
