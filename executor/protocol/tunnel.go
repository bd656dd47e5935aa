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
