package executor

import (
	"context"
	"errors"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/session"
	"github.com/execlab/executor/jsonwire"
)

// handleInitialize creates or resumes the connection's session (spec/jsonrpc.md §2).
func handleInitialize(_ context.Context, c *conn, p *protocol.InitializeParams) (any, error) {
	var sess *session.Session[*sessionState]
	if p.ResumeSessionID == nil {
		var err error
		sess, err = c.srv.sessions.Create(c, newSessionState(c.srv))
		if err != nil {
			return nil, jsonwire.Internal("creating session: %v", err)
		}
	} else {
		id := *p.ResumeSessionID
		var err error
		sess, err = c.srv.sessions.Resume(id, c)
		switch {
		case errors.Is(err, session.ErrAttached):
			return nil, &jsonwire.Error{Code: jsonwire.CodeSessionAttached,
				Message: "session " + id + " is already attached to another connection"}
		case err != nil:
			return nil, jsonwire.InvalidRequest("unknown session id %s", id)
		}
	}
	// Notifications switch over before the response is written, so on resume they may
	// precede it (clients buffer).
	sess.State.attach(c)
	c.mu.Lock()
	c.sess = sess
	c.initDone = true
	c.mu.Unlock()
	return &protocol.InitializeResult{SessionID: sess.ID, EnvironmentInfo: c.srv.info}, nil
}
