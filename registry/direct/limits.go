package direct

import "time"

// Wire constants, fixed by the reference (docs/direct-transport.md, PROBED on 0.171.0).
const (
	// Transport is the only transport value the registration sends and accepts back.
	Transport = "direct_jsonrpc_v1"
	// RegisterSuffix follows /cloud/environment/{id}/ in the registration path.
	RegisterSuffix = "direct/register"
	// DefaultService is the SigV4 service name when --aws-service is not given: API Gateway.
	DefaultService = "execute-api"
)

// Implementation constants (our choice).
const (
	// RequestTimeout bounds the registration request, headers and body (as registry/client).
	RequestTimeout = 10 * time.Second
	// MaxResponseBody is the most registration response bytes read (bytes).
	MaxResponseBody = 64 << 10
	// MaxErrorBody is the most of an error response body quoted in an Error (bytes).
	MaxErrorBody = 512
)
