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
// Signing uses the AWS SDK for Go v2's aws/signer/v4 (the maintained SigV4 implementation;
// it mirrors the reference, which uses the Rust AWS SDK). Credential discovery follows the
// SDK's default chain (config.LoadDefaultConfig) but is assembled here (signer.go:
// resolveAWS, the shared-file INI parser and profile rules, the STS and SSO calls) from
// the SDK's narrow credential packages —
// static keys, credential_process (credentials/processcreds), the ECS/EKS container
// endpoint (credentials/endpointcreds), the EC2 instance role (credentials/ec2rolecreds
// over feature/ec2/imds) and aws.CredentialsCache — plus our own calls to STS
// (AssumeRoleWithWebIdentity, AssumeRole; Query API) and IAM Identity Center (SSO
// GetRoleCredentials with the `aws sso login` token cache, SSO-OIDC refresh): the SDK's
// config package links the sts, sso, ssooidc and signin clients, whose endpoint tables and
// schemas cost every executor process ~590 KB of heap at init (rss_idle, docs/bench.md).
// Not supported: `login_session` profiles (`aws login`, the signin service) and MFA
// prompts (mfa_serial), which the SDK chain also refuses without a token provider.
// Only this package imports the SDK.
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
