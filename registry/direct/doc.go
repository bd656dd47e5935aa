// Package direct is the executor's side of the reference's "direct" remote transport
// (`--remote-transport direct --aws-sigv4`, docs/direct-transport.md): one AWS SigV4-signed
// registration POST, then a SigV4-signed WebSocket upgrade to the URL the registry returns.
// Over that WebSocket the executor speaks plain JSON-RPC (one message per text frame), as on
// a local `serve` socket: there is no Noise, no relay framing and no per-harness validation —
// the AWS front (an API Gateway WebSocket API) authenticates the executor by its signature,
// and whoever sits behind the URL is trusted as the harness.
//
// # Wire (docs/direct-transport.md; every line PROBED on codex 0.171.0)
//
//	POST {base}/cloud/environment/{id}/direct/register
//	  content-type: application/json, accept: */*
//	  x-amz-date, [x-amz-security-token], authorization: AWS4-HMAC-SHA256 ...
//	  SignedHeaders=content-type;host;x-amz-date[;x-amz-security-token]
//	  body {"transport":"direct_jsonrpc_v1"}
//	← 2xx {"environment_id":id,"transport":"direct_jsonrpc_v1","registration_id":r,"url":"wss://..."}
//	GET {url} (WebSocket upgrade)
//	  x-amz-date, [x-amz-security-token], authorization: AWS4-HMAC-SHA256 ...
//	  SignedHeaders=host;x-amz-date[;x-amz-security-token]
//
// The payload hash is the SHA-256 of the exact body sent (of "" for the upgrade); the query
// string of the url is signed; the signature is a header, never a presigned query.
//
// # Dependency
//
// Signing and credential discovery use the AWS SDK for Go v2 (github.com/aws/aws-sdk-go-v2:
// aws/signer/v4 for the signature, config for the shared config/credentials files, profiles,
// environment variables, SSO, web identity, ECS and IMDS). That is the maintained
// implementation of both; hand-rolling SigV4 or the credential chain would be the riskier
// choice (issue 30), and it mirrors the reference, which uses the Rust AWS SDK for the same
// two jobs. Only this package imports it.
//
// # Errors
//
// Register and Dial return *Error, whose Kind names the reference's error category
// ("environment registry authentication error" for 401/403, "environment registry request
// failed" otherwise, "configuration error", "protocol error"). Response bodies are included
// only up to MaxErrorBody bytes, as the reference does; credentials, signatures and the
// url's query are never put in an error or a log.
//
// # Concurrency
//
// A Signer is immutable and safe for concurrent use; credentials are retrieved (and
// refreshed when they expire) through the SDK's credential cache on every signature. The
// package starts no goroutines.
//
// Layers: above net/http, coder/websocket and the AWS SDK; below
// cmd/executor/internal/remote, which serves executor JSON-RPC on the socket Dial returns.
// It knows nothing of JSON-RPC, Noise or the relay.
package direct
