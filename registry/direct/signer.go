package direct

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
)

// SignerOptions configures LoadSigner. The zero value loads the SDK's default chains.
type SignerOptions struct {
	// Profile selects a shared-config profile (--aws-profile). When set, credentials and
	// region come from that profile even if AWS_ACCESS_KEY_ID is set, as in the reference
	// (PROBED). Empty means AWS_PROFILE, then "default", after the environment variables.
	Profile string
	// Region is the signing region (--aws-region). Empty means the SDK region chain
	// (AWS_REGION, AWS_DEFAULT_REGION, the profile's region); no region at all is an error.
	Region string
	// Service is the signing service (--aws-service). Empty means DefaultService; a value
	// that is only blanks is an error.
	Service string
	// Credentials, when not nil, replaces the SDK's credential chain (tests, embedding).
	Credentials aws.CredentialsProvider
	// Now is the signing clock. Nil means time.Now. Tests use it to sign outside the skew.
	Now func() time.Time
}

// Signer signs registration and upgrade requests with AWS SigV4. It is immutable and safe
// for concurrent use.
type Signer struct {
	creds   aws.CredentialsProvider
	region  string
	service string
	now     func() time.Time
	v4      *v4.Signer
}

// LoadSigner resolves the region and the credential provider through the AWS SDK's shared
// configuration (files named by AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE, default
// ~/.aws/config and ~/.aws/credentials). Credentials are not fetched yet: the first Sign
// fetches them, and a failure then is an ErrAuth.
func LoadSigner(ctx context.Context, o SignerOptions) (*Signer, error) {
	service := o.Service
	if service == "" {
		service = DefaultService
	}
	if strings.TrimSpace(service) == "" {
		return nil, errorf(ErrConfig, 0, nil, "AWS service name must not be empty")
	}
	var opts []func(*config.LoadOptions) error
	if o.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(o.Profile))
	}
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	if o.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(o.Credentials))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, errorf(ErrAuth, 0, err, "loading AWS configuration")
	}
	if cfg.Region == "" {
		return nil, errorf(ErrConfig, 0, nil, "AWS SDK config did not resolve a region")
	}
	if cfg.Credentials == nil {
		return nil, errorf(ErrAuth, 0, nil, "no AWS credential provider is configured")
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Signer{creds: cfg.Credentials, region: cfg.Region, service: service, now: now, v4: v4.NewSigner()}, nil
}

// Region is the signing region. Service is the signing service.
func (s *Signer) Region() string  { return s.region }
func (s *Signer) Service() string { return s.service }

// signedHeaders are the headers Sign sets on the request it is given.
var signedHeaders = []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"}

// Sign sets Authorization, X-Amz-Date and (with temporary credentials) X-Amz-Security-Token
// on h for a request to method rawURL carrying body. The signature covers host, the path,
// the query, x-amz-date, the security token, the content-type when contentType is not
// empty, and the SHA-256 of body — the header set the reference signs (PROBED), nothing
// else, so headers added later (accept, the WebSocket handshake's) may be changed by
// proxies without breaking it. A ws:// or wss:// url is signed as http:// or https://.
func (s *Signer) Sign(ctx context.Context, h http.Header, method, rawURL, contentType string, body []byte) error {
	u := rawURL
	switch {
	case strings.HasPrefix(u, "ws://"):
		u = "http://" + u[len("ws://"):]
	case strings.HasPrefix(u, "wss://"):
		u = "https://" + u[len("wss://"):]
	}
	// A request holding only what is signed: the SDK signs every header it finds.
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return errorf(ErrConfig, 0, nil, "building the request to sign")
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		return errorf(ErrAuth, 0, err, "failed to load AWS credentials")
	}
	if !creds.HasKeys() {
		return errorf(ErrAuth, 0, errors.New("empty access key"), "failed to load AWS credentials")
	}
	sum := sha256.Sum256(body)
	if err := s.v4.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), s.service, s.region, s.now().UTC()); err != nil {
		return errorf(ErrAuth, 0, err, "SigV4 signing failed")
	}
	for _, k := range signedHeaders {
		if v := req.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	return nil
}
