package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Call sends a request and waits for its response. params is encoded with encoding/json
// (nil sends no params member); a non-nil result receives the decoded result. A JSON-RPC
// error response is returned as *RPCError. If ctx ends first, Call returns ctx.Err() and a
// late response is dropped; the request may still have been executed by the server.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	raw, err := c.call(ctx, method, params)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := jsonUnmarshal(raw, result); err != nil {
		return fmt.Errorf("decoding %s result: %w", method, err)
	}
	return nil
}

func (c *Client) call(ctx context.Context, method string, params any) ([]byte, error) {
	id := c.nextID.Add(1)
	msg, err := appendRequest(nil, id, method, params)
	if err != nil {
		return nil, err
	}
	return c.roundTrip(ctx, method, id, msg)
}

// roundTrip sends msg, the encoded request id, and waits for its reply. msg is not used
// after roundTrip returns.
func (c *Client) roundTrip(ctx context.Context, method string, id int64, msg []byte) ([]byte, error) {
	ch := make(chan reply, 1) // buffered: the read loop never waits for the caller
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return nil, c.closedError()
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write(ctx, msg); err != nil {
		c.abandon(id)
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		c.abandon(id)
		// The reply may have raced the cancellation; prefer it.
		select {
		case r := <-ch:
			if r.err != nil {
				return nil, r.err
			}
			return r.result, nil
		default:
		}
		return nil, ctx.Err()
	}
}

// abandon forgets a pending call; its reply, if any arrives, is dropped.
func (c *Client) abandon(id int64) {
	c.mu.Lock()
	if c.pending != nil {
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

// notify sends a notification.
func (c *Client) notify(ctx context.Context, method string, params any) error {
	msg, err := appendNotification(nil, method, params)
	if err != nil {
		return err
	}
	if err := c.write(ctx, msg); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	return nil
}

// appendRequest appends {"id":id,"method":method[,"params":params]}.
func appendRequest(b []byte, id int64, method string, params any) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ',')
	return appendMethodParams(b, method, params)
}

// appendNotification appends {"method":method[,"params":params]}.
func appendNotification(b []byte, method string, params any) ([]byte, error) {
	b = append(b, '{')
	return appendMethodParams(b, method, params)
}

func appendMethodParams(b []byte, method string, params any) ([]byte, error) {
	m, err := json.Marshal(method)
	if err != nil {
		return nil, fmt.Errorf("encoding method name: %w", err)
	}
	b = append(b, `"method":`...)
	b = append(b, m...)
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encoding %s params: %w", method, err)
		}
		b = append(b, `,"params":`...)
		b = append(b, p...)
	}
	return append(b, '}'), nil
}

// appendErrorResponse appends {"id":id,"error":{"code":code,"message":msg}}; rawID is
// echoed byte for byte.
func appendErrorResponse(b, rawID []byte, code int64, msg string) []byte {
	m, _ := json.Marshal(msg) // a string always marshals
	b = append(b, `{"id":`...)
	b = append(b, rawID...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = append(b, m...)
	return append(b, `}}`...)
}

func jsonUnmarshal(raw []byte, v any) error {
	if raw == nil {
		raw = []byte("null")
	}
	return json.Unmarshal(raw, v)
}
