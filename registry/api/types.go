package api

import "encoding/json"

// RegisterRequest is the body of R1 (spec/registry-auth.md §3.1): exactly these two
// members. ExecutorPublicKey is the Noise public-key JSON (spec §9), opaque here.
type RegisterRequest struct {
	SecurityProfile   string          `json:"security_profile"`
	ExecutorPublicKey json.RawMessage `json:"executor_public_key"`
}

// RegisterResponse is the 2xx body of R1 (spec/registry-auth.md §3.2). URL is the
// rendezvous websocket URL the executor dials verbatim (its query is the credential).
type RegisterResponse struct {
	EnvironmentID          string           `json:"environment_id"`
	URL                    string           `json:"url"`
	SecurityProfile        string           `json:"security_profile"`
	ExecutorRegistrationID string           `json:"executor_registration_id"`
	TransportPolicy        *TransportPolicy `json:"transport_policy,omitempty"`
	// ExitNoticeToken is this registry's extension (docs/reliability.md §5): a one-shot
	// secret with which the executor's process guard reports, after the executor has
	// died, that this registration's executor exited (ExitNoticeRequest). Released
	// executors ignore the member (unknown response members are ignored,
	// spec/registry-auth.md §2.2); a registry that does not send it gets no notice. A
	// credential: never logged.
	ExitNoticeToken string `json:"exit_notice_token,omitempty"`
}

// ExitNoticeRequest is the body of this registry's extension endpoint
// POST {EnvironmentPathPrefix}{id}/{ExecutorExitedSuffix} (docs/reliability.md §5): the
// executor of registration ExecutorRegistrationID has exited and its processes are gone.
// It carries no bearer: Token (the register response's ExitNoticeToken) is the credential,
// good once, for that registration only. The answer is 200 {} when recorded, 404
// not_found otherwise (unknown, used or superseded; never distinguished).
type ExitNoticeRequest struct {
	ExecutorRegistrationID string `json:"executor_registration_id"`
	Token                  string `json:"token"`
}

// TransportPolicy is the optional, leniently parsed transport policy of register and
// connect responses (spec/registry-auth.md §3.2). Released peers may ignore it.
type TransportPolicy struct {
	Version                      int   `json:"version,omitempty"`
	AssignmentEpoch              int64 `json:"assignment_epoch,omitempty"`
	OutboundTCPNoDelay           *bool `json:"outbound_tcp_nodelay,omitempty"`
	RendezvousAcceptedTCPNoDelay *bool `json:"rendezvous_accepted_tcp_nodelay,omitempty"`
}

// ValidateRequest is the body of R2 (spec/registry-auth.md §4.1). HarnessPublicKey is the
// Noise-authenticated harness static key as public-key JSON; HarnessKeyAuthorization is
// the message-1 payload (≤ MaxAuthorizationLen bytes of UTF-8, may be empty). The request
// also carries HeaderStreamID.
type ValidateRequest struct {
	ExecutorRegistrationID  string          `json:"executor_registration_id"`
	HarnessPublicKey        json.RawMessage `json:"harness_public_key"`
	HarnessKeyAuthorization string          `json:"harness_key_authorization"`
}

// ValidateResponse is the 2xx body of R2. Only Valid == true lets the executor answer the
// handshake; a missing member counts as false (spec/registry-auth.md §4.2).
type ValidateResponse struct {
	Valid bool `json:"valid"`
}

// ConnectRequest is the body of R3 (spec/registry-auth.md §5.2): exactly one member.
type ConnectRequest struct {
	HarnessPublicKey json.RawMessage `json:"harness_public_key"`
}

// ConnectResponse is the 2xx body of R3, the connect bundle (spec/registry-auth.md §5.3):
// the harness dials URL verbatim, pins ExecutorPublicKey and sends HarnessKeyAuthorization
// as its message-1 payload. One bundle serves one physical connection attempt; the
// authorization is single-use and short-lived.
type ConnectResponse struct {
	EnvironmentID           string           `json:"environment_id"`
	URL                     string           `json:"url"`
	SecurityProfile         string           `json:"security_profile"`
	ExecutorRegistrationID  string           `json:"executor_registration_id"`
	ExecutorPublicKey       json.RawMessage  `json:"executor_public_key"`
	HarnessKeyAuthorization string           `json:"harness_key_authorization"`
	TransportPolicy         *TransportPolicy `json:"transport_policy,omitempty"`
}

// String redacts the bundle: the URL query and the authorization are credentials
// (spec/registry-auth.md §14).
func (c ConnectResponse) String() string {
	return "ConnectResponse{environment_id:" + c.EnvironmentID + ", url:<redacted>, registration:" +
		c.ExecutorRegistrationID + ", harness_key_authorization:<redacted>}"
}
