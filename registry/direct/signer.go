package direct

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/aws-sdk-go-v2/credentials/processcreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

// SignerOptions configures LoadSigner. The zero value loads the default chains.
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
	// Credentials, when not nil, replaces the credential chain (tests, embedding).
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

// LoadSigner resolves the region and the credential provider as the AWS SDK's default
// configuration does (resolveAWS below: environment, the shared config and credentials files
// named by AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE, default ~/.aws/config and
// ~/.aws/credentials, web identity, SSO, credential_process, assumed roles, container and
// EC2 instance credentials). Credentials are not fetched yet: the first Sign fetches them,
// and a failure then is an ErrAuth.
func LoadSigner(ctx context.Context, o SignerOptions) (*Signer, error) {
	service := o.Service
	if service == "" {
		service = DefaultService
	}
	if strings.TrimSpace(service) == "" {
		return nil, errorf(ErrConfig, 0, nil, "AWS service name must not be empty")
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	region, creds, err := resolveAWS(o, now)
	if err != nil {
		return nil, errorf(ErrAuth, 0, err, "loading AWS configuration")
	}
	if region == "" {
		return nil, errorf(ErrConfig, 0, nil, "AWS SDK config did not resolve a region")
	}
	return &Signer{creds: creds, region: region, service: service, now: now, v4: v4.NewSigner()}, nil
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

// The credential chain of the AWS SDK for Go v2's config.LoadDefaultConfig, built from
// the SDK's narrow credential packages (static, process, container endpoint, EC2 role)
// plus our own calls to STS (web identity, assume role) and IAM Identity Center (SSO):
// the SDK's config package links the sts, sso, ssooidc and signin clients, whose
// endpoint tables and schemas cost every executor process ~590 KB of heap at init
// (rss_idle in docs/bench.md), for a code path only `--aws-sigv4` takes.

// ecsContainerEndpoint is the host AWS_CONTAINER_CREDENTIALS_RELATIVE_URI is relative to.
const ecsContainerEndpoint = "http://169.254.170.2"

// awsChain holds what the providers of one LoadSigner share.
type awsChain struct {
	region  string
	profile *awsProfile // the selected profile (empty when none is configured)
	http    *http.Client
	now     func() time.Time
}

// resolveAWS returns the signing region and the credential provider for o.
func resolveAWS(o SignerOptions, now func() time.Time) (string, aws.CredentialsProvider, error) {
	name := o.Profile
	if name == "" {
		name = firstEnv("AWS_PROFILE", "AWS_DEFAULT_PROFILE")
	}
	mustExist := o.Profile != "" || os.Getenv("AWS_PROFILE") != ""
	if name == "" {
		name = "default"
	}
	prof, err := loadAWSProfile(loadAWSSections(sharedFiles()), name, map[string]bool{})
	if err != nil {
		if !errors.Is(err, errProfileNotExist) || mustExist {
			return "", nil, err
		}
		prof, err = &awsProfile{name: name}, nil
	}
	region := o.Region
	if region == "" {
		region = firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if region == "" {
		region = prof.region
	}
	if o.Credentials != nil {
		return region, cached(o.Credentials), nil
	}
	client, err := awsHTTPClient(prof)
	if err != nil {
		return "", nil, err
	}
	c := &awsChain{region: region, profile: prof, http: client, now: now}
	var p aws.CredentialsProvider
	env := envCredentials()
	switch {
	case o.Profile != "":
		p, err = c.fromProfile(prof)
	case env.HasKeys():
		p = credentials.StaticCredentialsProvider{Value: env}
	case os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE") != "":
		p, err = c.webIdentity(os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE"), os.Getenv("AWS_ROLE_ARN"), os.Getenv("AWS_ROLE_SESSION_NAME"))
	default:
		p, err = c.fromProfile(prof)
	}
	if err != nil {
		return "", nil, err
	}
	return region, cached(p), nil
}

// fromProfile is the SDK's resolveCredsFromProfile: the profile's own source of
// credentials, then the role it assumes with them.
func (c *awsChain) fromProfile(p *awsProfile) (aws.CredentialsProvider, error) {
	var prov aws.CredentialsProvider
	var err error
	switch {
	case p.source != nil:
		prov, err = c.fromProfile(p.source)
	case p.creds.HasKeys():
		prov = credentials.StaticCredentialsProvider{Value: p.creds}
	case p.credentialSource != "":
		prov, err = c.fromCredentialSource(p.credentialSource)
	case p.webIdentityTokenFile != "":
		// A web identity profile assumes its role_arn itself.
		return c.webIdentity(p.webIdentityTokenFile, p.roleARN, p.roleSessionName)
	case p.hasSSO():
		prov, err = c.sso(p)
	case p.loginSession != "":
		err = fmt.Errorf("profile %q uses login_session (`aws login`), which the executor does not support: use `aws configure export-credentials` with credential_process, or SSO", p.name)
	case p.credentialProcess != "":
		prov = processcreds.NewProvider(p.credentialProcess)
	case os.Getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") != "":
		prov = c.containerProvider(ecsContainerEndpoint + os.Getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"))
	case os.Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI") != "":
		prov, err = c.localContainerProvider(os.Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI"))
	default:
		prov = c.imdsProvider()
	}
	if err != nil {
		return nil, err
	}
	if p.roleARN != "" {
		return c.assumeRole(prov, p)
	}
	return prov, nil
}

// fromCredentialSource resolves a profile's credential_source.
func (c *awsChain) fromCredentialSource(src string) (aws.CredentialsProvider, error) {
	switch src {
	case "Ec2InstanceMetadata":
		return c.imdsProvider(), nil
	case "Environment":
		return credentials.StaticCredentialsProvider{Value: envCredentials()}, nil
	case "EcsContainer":
		if rel := os.Getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); rel != "" {
			return c.containerProvider(ecsContainerEndpoint + rel), nil
		}
		if full := os.Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI"); full != "" {
			return c.localContainerProvider(full)
		}
		return nil, errors.New("EcsContainer was specified as the credential_source, but neither 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI' or AWS_CONTAINER_CREDENTIALS_FULL_URI' was set")
	default:
		return nil, errors.New("credential_source values must be EcsContainer, Ec2InstanceMetadata, or Environment")
	}
}

// imdsProvider is the EC2 instance role through IMDS: AWS_EC2_METADATA_DISABLED (read by
// the imds client), the endpoint, its mode and IMDSv1 fallback from the environment, else
// from the profile.
func (c *awsChain) imdsProvider() aws.CredentialsProvider {
	var o imds.Options
	mode := firstEnv("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE")
	if mode == "" {
		mode = c.profile.imdsEndpointMode
	}
	if strings.EqualFold(mode, "IPv6") {
		o.EndpointMode = imds.EndpointModeStateIPv6
	}
	if o.Endpoint = os.Getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT"); o.Endpoint == "" {
		o.Endpoint = c.profile.imdsEndpoint
	}
	v1Off := firstEnv("AWS_EC2_METADATA_V1_DISABLED")
	if v1Off == "" {
		v1Off = c.profile.imdsV1Disabled
	}
	if strings.EqualFold(v1Off, "true") {
		o.EnableFallback = aws.FalseTernary
	}
	o.HTTPClient = c.http
	client := imds.New(o)
	return aws.NewCredentialsCache(ec2rolecreds.New(func(eo *ec2rolecreds.Options) { eo.Client = client }))
}

// containerProvider is the ECS/EKS container credential endpoint (with
// AWS_CONTAINER_AUTHORIZATION_TOKEN or the file AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE).
func (c *awsChain) containerProvider(endpoint string) aws.CredentialsProvider {
	p := endpointcreds.New(endpoint, func(o *endpointcreds.Options) {
		o.HTTPClient = c.http
		o.AuthorizationToken = os.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
		if file := os.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); file != "" {
			o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
				b, err := os.ReadFile(file)
				if err != nil {
					return "", fmt.Errorf("failed to read authorization token from %v: %w", file, err)
				}
				return string(b), nil
			})
		}
	})
	return aws.NewCredentialsCache(p, func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = 5 * time.Minute })
}

// localContainerProvider checks AWS_CONTAINER_CREDENTIALS_FULL_URI as the SDK does: an
// http:// URL must name a loopback, ECS or EKS address.
func (c *awsChain) localContainerProvider(endpoint string) (aws.CredentialsProvider, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("invalid URL, %w", err)
	}
	host := u.Hostname()
	if host == "" {
		return nil, errors.New("unable to parse host from local HTTP cred provider URL")
	}
	if u.Scheme == "http" {
		ok, err := containerHostAllowed(host)
		if err != nil {
			return nil, fmt.Errorf("failed to resolve host %q, %v", host, err)
		}
		if !ok {
			return nil, fmt.Errorf("invalid endpoint host, %q, only loopback/ecs/eks hosts are allowed", host)
		}
	}
	return c.containerProvider(endpoint), nil
}

func containerHostAllowed(host string) (bool, error) {
	allowed := func(ip net.IP) bool {
		return ip.IsLoopback() || ip.Equal(net.IPv4(169, 254, 170, 2)) || ip.Equal(net.IPv4(169, 254, 170, 23)) ||
			ip.Equal(net.ParseIP("fd00:ec2::23"))
	}
	if ip := net.ParseIP(host); ip != nil {
		return allowed(ip), nil
	}
	addrs, err := net.LookupHost(host)
	if err != nil {
		return false, err
	}
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip == nil || !allowed(ip) {
			return false, nil
		}
	}
	return true, nil
}

// awsHTTPClient is the client of the STS, SSO, SSO-OIDC, container and IMDS calls: the
// default transport (proxies from the environment), with only the certificates of
// AWS_CA_BUNDLE, else the profile's ca_bundle, trusted when one is set, as in the SDK.
func awsHTTPClient(p *awsProfile) (*http.Client, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	file := firstEnv("AWS_CA_BUNDLE")
	if file == "" {
		file = p.caBundle
	}
	if file == "" {
		return c, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("failed to load custom CA bundle PEM file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("failed to load custom CA bundle PEM file %s: no certificate in it", file)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	c.Transport = t
	return c, nil
}

// envCredentials are AWS_ACCESS_KEY_ID (or AWS_ACCESS_KEY), AWS_SECRET_ACCESS_KEY (or
// AWS_SECRET_KEY), AWS_SESSION_TOKEN and AWS_ACCOUNT_ID.
func envCredentials() aws.Credentials {
	c := aws.Credentials{AccessKeyID: firstEnv("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY"),
		SecretAccessKey: firstEnv("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY"), Source: "EnvConfigCredentials"}
	if !c.HasKeys() {
		return aws.Credentials{}
	}
	c.SessionToken, c.AccountID = os.Getenv("AWS_SESSION_TOKEN"), os.Getenv("AWS_ACCOUNT_ID")
	return c
}

// firstEnv is the first non-empty of the variables.
func firstEnv(keys ...string) string {
	for _, k := range keys {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// cached wraps p in the SDK's credential cache (which refreshes expiring credentials)
// unless it is one already.
func cached(p aws.CredentialsProvider) aws.CredentialsProvider {
	if _, ok := p.(*aws.CredentialsCache); ok {
		return p
	}
	return aws.NewCredentialsCache(p)
}

// serviceEndpoint is the base URL of an AWS service: AWS_ENDPOINT_URL_<SERVICE>, else
// AWS_ENDPOINT_URL (both ignored with AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true), else
// https://host.region.amazonaws.com (.com.cn in the China regions).
func serviceEndpoint(envSuffix, host, region string) string {
	if !strings.EqualFold(os.Getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true") {
		if v := firstEnv("AWS_ENDPOINT_URL_"+envSuffix, "AWS_ENDPOINT_URL"); v != "" {
			return strings.TrimRight(v, "/")
		}
	}
	domain := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	return "https://" + host + "." + region + "." + domain
}

// awsProfile is one resolved shared-config profile: the keys the credential chain and the
// region use, and, for `role_arn` + `source_profile`, the source profile it chains to.
// The rules are those of the AWS SDK for Go v2's config.LoadSharedConfigProfile.
type awsProfile struct {
	name   string
	region string
	creds  aws.Credentials // static keys, when HasKeys

	roleARN, externalID, mfaSerial, roleSessionName string
	sourceProfile, credentialSource                 string
	duration                                        *time.Duration
	credentialProcess, webIdentityTokenFile         string
	loginSession                                    string
	imdsEndpoint, imdsEndpointMode, imdsV1Disabled  string
	caBundle                                        string

	ssoSessionName, ssoRegion, ssoStartURL, ssoAccountID, ssoRoleName string
	ssoSession                                                        *ssoSession

	source *awsProfile
}

// ssoSession is an `[sso-session NAME]` section.
type ssoSession struct{ name, region, startURL string }

// errProfileNotExist is returned by loadAWSProfile for a profile no file defines.
var errProfileNotExist = errors.New("profile does not exist")

// sharedFiles returns the shared config and credentials file names: AWS_CONFIG_FILE and
// AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/config and ~/.aws/credentials.
func sharedFiles() (config, credentials string) {
	config, credentials = os.Getenv("AWS_CONFIG_FILE"), os.Getenv("AWS_SHARED_CREDENTIALS_FILE")
	if config == "" || credentials == "" {
		home, _ := os.UserHomeDir()
		if config == "" {
			config = filepath.Join(home, ".aws", "config")
		}
		if credentials == "" {
			credentials = filepath.Join(home, ".aws", "credentials")
		}
	}
	return config, credentials
}

// loadAWSSections reads both files (one that cannot be read counts as empty) and merges
// them as the SDK does: in the config file `[profile NAME]` is profile NAME (and wins
// over a bare `[NAME]`, which only `default` may be), `[sso-session NAME]` is kept and
// other sections are dropped; in the credentials file `[NAME]` is profile NAME and
// `[profile NAME]` is dropped; the credentials file's values win.
func loadAWSSections(configFile, credentialsFile string) map[string]*iniSection {
	merged := map[string]*iniSection{}
	if b, err := os.ReadFile(configFile); err == nil {
		parsed := parseAWSINI(string(b))
		for name, s := range parsed {
			switch {
			case strings.HasPrefix(name, "profile "):
				merged[strings.TrimPrefix(name, "profile ")] = s
			case strings.HasPrefix(name, "sso-session "):
				merged[name] = s
			case strings.EqualFold(name, "default") && parsed["profile "+name] == nil:
				merged[name] = s
			}
		}
	}
	b, err := os.ReadFile(credentialsFile)
	if err != nil {
		return merged
	}
	for name, s := range parseAWSINI(string(b)) {
		if strings.HasPrefix(name, "profile ") {
			continue
		}
		dst := merged[name]
		if dst == nil {
			merged[name] = s
			continue
		}
		dst.partial = s.partial
		for k, v := range s.values {
			dst.values[k] = v
		}
	}
	return merged
}

// loadAWSProfile resolves profile name from sections, following source_profile links
// (profiles marks the ones already on the path: a profile met again only provides
// credentials, as in the SDK).
func loadAWSProfile(sections map[string]*iniSection, name string, profiles map[string]bool) (*awsProfile, error) {
	s := sections[name]
	if s == nil {
		return nil, fmt.Errorf("failed to get shared config profile, %s: %w", name, errProfileNotExist)
	}
	if s.partial {
		return nil, fmt.Errorf("error fetching config from profile, %v: partial credentials found for profile %v", name, name)
	}
	v := s.values
	p := &awsProfile{name: name, region: v["region"],
		roleARN: v["role_arn"], externalID: v["external_id"], mfaSerial: v["mfa_serial"],
		roleSessionName: v["role_session_name"], sourceProfile: v["source_profile"],
		credentialSource: v["credential_source"], credentialProcess: v["credential_process"],
		webIdentityTokenFile: v["web_identity_token_file"], loginSession: v["login_session"],
		ssoSessionName: v["sso_session"], ssoRegion: v["sso_region"], ssoStartURL: v["sso_start_url"],
		ssoAccountID: v["sso_account_id"], ssoRoleName: v["sso_role_name"],
		imdsEndpoint: v["ec2_metadata_service_endpoint"], imdsEndpointMode: v["ec2_metadata_service_endpoint_mode"],
		imdsV1Disabled: v["ec2_metadata_v1_disabled"], caBundle: v["ca_bundle"]}
	if d, ok := v["duration_seconds"]; ok {
		n, _ := strconv.Atoi(d) // the SDK's quirk: a non-number is 0
		dur := time.Duration(n) * time.Second
		p.duration = &dur
	}
	if c := (aws.Credentials{AccessKeyID: v["aws_access_key_id"], SecretAccessKey: v["aws_secret_access_key"],
		SessionToken: v["aws_session_token"], AccountID: v["aws_account_id"], Source: "SharedConfigCredentials"}); c.HasKeys() {
		p.creds = c
	}
	if profiles[name] {
		// A profile met again (a source_profile pointing back) only provides credentials.
		p.roleARN, p.externalID, p.mfaSerial, p.roleSessionName, p.sourceProfile = "", "", "", "", ""
	} else if err := p.requireRoleARN(); err != nil {
		return nil, err
	}
	if len(profiles) != 0 && p.creds.HasKeys() {
		return p, nil
	}
	profiles[name] = true
	if n := countSet(p.sourceProfile, p.credentialSource, p.credentialProcess, p.webIdentityTokenFile); n > 1 {
		return nil, errors.New("only one credential type may be specified per profile: source profile, credential source, credential process, web identity token")
	}
	if p.sourceProfile != "" {
		// The source profile provides the credentials: this profile's own are ignored.
		p.credentialSource, p.credentialProcess, p.webIdentityTokenFile = "", "", ""
		p.creds = aws.Credentials{}
		p.ssoAccountID, p.ssoRegion, p.ssoRoleName, p.ssoStartURL = "", "", "", ""
		src, err := loadAWSProfile(sections, p.sourceProfile, profiles)
		if err != nil {
			if errors.Is(err, errProfileNotExist) {
				return nil, fmt.Errorf("failed to load assume role %s, of profile %s: %w", p.roleARN, p.sourceProfile, err)
			}
			return nil, err
		}
		if !src.hasCredentials() {
			return nil, fmt.Errorf("failed to load assume role %s, of profile %s", p.roleARN, p.sourceProfile)
		}
		p.source = src
	}
	if p.ssoSessionName != "" {
		s := sections["sso-session "+strings.TrimSpace(p.ssoSessionName)]
		if s == nil {
			return nil, fmt.Errorf("failed to find SSO session section, %v", p.ssoSessionName)
		}
		p.ssoSession = &ssoSession{name: p.ssoSessionName, region: s.values["sso_region"], startURL: s.values["sso_start_url"]}
	}
	return p, nil
}

func (p *awsProfile) requireRoleARN() error {
	var kind string
	switch {
	case p.sourceProfile != "":
		kind = "source_profile"
	case p.credentialSource != "":
		kind = "credential_source"
	case p.webIdentityTokenFile != "":
		kind = "web_identity_token_file"
	}
	if kind != "" && p.roleARN == "" {
		return fmt.Errorf("credential type %s requires role_arn, profile %s", kind, p.name)
	}
	return nil
}

func (p *awsProfile) hasSSO() bool {
	return p.ssoSessionName != "" || p.ssoRegion != "" || p.ssoAccountID != "" || p.ssoStartURL != "" || p.ssoRoleName != ""
}

func (p *awsProfile) hasCredentials() bool {
	return p.sourceProfile != "" || p.credentialSource != "" || p.credentialProcess != "" ||
		p.webIdentityTokenFile != "" || p.hasSSO() || p.creds.HasKeys()
}

// validateSSO checks the SSO keys as the SDK does before it builds the SSO provider.
func (p *awsProfile) validateSSO() error {
	var missing []string
	need := func(v, key string) {
		if v == "" {
			missing = append(missing, key)
		}
	}
	if p.ssoSessionName != "" {
		if p.ssoSession == nil {
			missing = append(missing, "sso-session ")
		} else {
			need(p.ssoSession.region, "sso_region")
			need(p.ssoSession.startURL, "sso_start_url")
		}
	} else {
		need(p.ssoRegion, "sso_region")
		need(p.ssoStartURL, "sso_start_url")
		need(p.ssoAccountID, "sso_account_id")
		need(p.ssoRoleName, "sso_role_name")
	}
	if len(missing) > 0 {
		return fmt.Errorf("profile %q is configured to use SSO but is missing required configuration: %s", p.name, strings.Join(missing, ", "))
	}
	if p.ssoSession != nil {
		if p.ssoRegion != "" && p.ssoRegion != p.ssoSession.region {
			return fmt.Errorf("sso_region in profile %q must match sso_region in sso-session", p.name)
		}
		if p.ssoStartURL != "" && p.ssoStartURL != p.ssoSession.startURL {
			return fmt.Errorf("sso_start_url in profile %q must match sso_start_url in sso-session", p.name)
		}
	}
	return nil
}

func countSet(vs ...string) int {
	n := 0
	for _, v := range vs {
		if v != "" {
			n++
		}
	}
	return n
}

// iniSection is one section of an AWS shared config or credentials file: its keys
// (lower-cased) and string values.
type iniSection struct {
	values map[string]string
	// partial is set when the section has only one of aws_access_key_id and
	// aws_secret_access_key (an error once the profile is used, as in the SDK).
	partial bool
}

// parseAWSINI parses the INI dialect of ~/.aws/config and ~/.aws/credentials as the AWS
// SDKs read it: `[type name]` or `[name]` headers (the type and the name separated by
// blanks, normalised to one space; `#` or `;` starts a comment), `key = value` or
// `key: value` properties (keys lower-cased, one pair of surrounding quotes removed, a
// comment after a blank dropped), indented `key = value` lines under a key with an empty
// value (sub-properties, such as the `s3 =` block: kept out of the values), indented lines
// continuing a value, and `#`/`;` comment lines. Lines that are none of these and
// properties before the first header are ignored. It never fails.
func parseAWSINI(text string) map[string]*iniSection {
	sections := map[string]*iniSection{}
	var cur *iniSection
	var curKey string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if strings.TrimSpace(line) == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if name, ok := iniHeader(line); ok {
			curKey = ""
			cur = sections[name]
			if cur == nil {
				cur = &iniSection{values: map[string]string{}}
				sections[name] = cur
			}
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		if cur == nil {
			continue
		}
		if !indented {
			if k, v, ok := iniProperty(strings.TrimRight(iniCutComment(line), " \t")); ok {
				curKey = k
				cur.values[k] = v
			}
			continue
		}
		if k, v, ok := iniProperty(trimmed); ok {
			if curKey == "" || cur.values[curKey] != "" {
				// An indented property after a key with a value is a property of its own.
				curKey = k
				cur.values[k] = strings.TrimSpace(iniCutComment(v))
				continue
			}
			continue // a sub-property of curKey (an `s3 =` block): not a string value
		}
		if curKey != "" && cur.values[curKey] != "" {
			cur.values[curKey] += "\n" + trimmed
		}
	}
	for _, s := range sections {
		_, id := s.values["aws_access_key_id"]
		_, secret := s.values["aws_secret_access_key"]
		s.partial = id != secret
	}
	return sections
}

// iniHeader recognises a `[type name]` line (comments after it dropped) and returns the
// section name, "type name" with one space, or "name".
func iniHeader(line string) (string, bool) {
	s, _, _ := strings.Cut(line, "#")
	s, _, _ = strings.Cut(s, ";")
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return "", false
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, true
	}
	return s[:i] + " " + strings.TrimLeft(s[i:], " \t"), true
}

// iniCutComment drops a comment introduced by a blank followed by '#' or ';'.
func iniCutComment(s string) string {
	for _, sep := range []string{" #", " ;", "\t#", "\t;"} {
		s, _, _ = strings.Cut(s, sep)
	}
	return s
}

// iniProperty splits `key = value` (or `key: value`, whichever separator comes first).
func iniProperty(s string) (key, value string, ok bool) {
	i := strings.IndexAny(s, "=:")
	if i < 0 {
		return "", "", false
	}
	key, value = strings.ToLower(strings.TrimSpace(s[:i])), strings.TrimSpace(s[i+1:])
	if len(value) >= 2 && (value[0] == '"' && value[len(value)-1] == '"' || value[0] == '\'' && value[len(value)-1] == '\'') {
		value = value[1 : len(value)-1]
	}
	return key, value, true
}

// maxAWSResponse bounds the STS, SSO and SSO-OIDC responses read.
const maxAWSResponse = 1 << 20

// stsProvider fetches temporary credentials from STS: AssumeRoleWithWebIdentity (unsigned,
// the token read from tokenFile on every call) or, with source set, AssumeRole signed with
// the source's credentials. The STS Query API (form POST, XML answer), as the SDK's
// stscreds providers call it, against the regional endpoint.
type stsProvider struct {
	c           *awsChain
	roleARN     string
	sessionName string
	tokenFile   string                  // web identity
	source      aws.CredentialsProvider // assume role
	duration    *time.Duration
	externalID  string
}

func (c *awsChain) webIdentity(tokenFile, roleARN, sessionName string) (aws.CredentialsProvider, error) {
	if roleARN == "" {
		return nil, errors.New("role ARN is not set")
	}
	return &stsProvider{c: c, roleARN: roleARN, sessionName: sessionName, tokenFile: tokenFile}, nil
}

func (c *awsChain) assumeRole(source aws.CredentialsProvider, p *awsProfile) (aws.CredentialsProvider, error) {
	if p.mfaSerial != "" {
		return nil, errors.New("assume role with MFA enabled, but AssumeRoleTokenProvider session option not set")
	}
	sp := &stsProvider{c: c, roleARN: p.roleARN, sessionName: p.roleSessionName, source: source, externalID: p.externalID}
	if p.duration != nil && *p.duration > 15*time.Minute {
		sp.duration = p.duration
	}
	return sp, nil
}

// Retrieve implements aws.CredentialsProvider.
func (p *stsProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	form := url.Values{"Version": {"2011-06-15"}, "RoleArn": {p.roleARN}}
	action := "AssumeRoleWithWebIdentity"
	if p.source == nil {
		b, err := os.ReadFile(p.tokenFile)
		if err != nil {
			return aws.Credentials{}, fmt.Errorf("failed to retrieve jwt from provide source, unable to read file at %s: %w", p.tokenFile, err)
		}
		form.Set("WebIdentityToken", string(b))
		name := p.sessionName
		if name == "" {
			name = strconv.FormatInt(p.c.now().UnixNano(), 10)
		}
		form.Set("RoleSessionName", name)
		if p.duration != nil {
			form.Set("DurationSeconds", strconv.Itoa(int(*p.duration/time.Second)))
		}
	} else {
		action = "AssumeRole"
		name := p.sessionName
		if name == "" {
			name = fmt.Sprintf("aws-go-sdk-%d", p.c.now().UTC().UnixNano())
		}
		form.Set("RoleSessionName", name)
		d := 15 * time.Minute
		if p.duration != nil {
			d = *p.duration
		}
		form.Set("DurationSeconds", strconv.Itoa(int(d/time.Second)))
		if p.externalID != "" {
			form.Set("ExternalId", p.externalID)
		}
	}
	form.Set("Action", action)
	if p.c.region == "" {
		return aws.Credentials{}, fmt.Errorf("STS %s: no region to call STS in", action)
	}
	body := []byte(form.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serviceEndpoint("STS", "sts", p.c.region)+"/", bytes.NewReader(body))
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("STS %s: %w", action, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	if p.source != nil {
		src, err := p.source.Retrieve(ctx)
		if err != nil {
			return aws.Credentials{}, fmt.Errorf("STS %s: source credentials: %w", action, err)
		}
		sum := sha256.Sum256(body)
		if err := v4.NewSigner().SignHTTP(ctx, src, req, hex.EncodeToString(sum[:]), "sts", p.c.region, p.c.now().UTC()); err != nil {
			return aws.Credentials{}, fmt.Errorf("STS %s: signing: %w", action, err)
		}
	}
	data, err := p.c.do(req, "STS "+action)
	if err != nil {
		return aws.Credentials{}, err
	}
	creds, err := parseSTSResponse(data)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("STS %s: %w", action, err)
	}
	return creds, nil
}

// stsCredentials is the Credentials element of an AssumeRole* result.
type stsCredentials struct {
	AccessKeyID     string    `xml:"AccessKeyId"`
	SecretAccessKey string    `xml:"SecretAccessKey"`
	SessionToken    string    `xml:"SessionToken"`
	Expiration      time.Time `xml:"Expiration"`
}

// parseSTSResponse decodes the credentials of an AssumeRole or AssumeRoleWithWebIdentity
// response body.
func parseSTSResponse(data []byte) (aws.Credentials, error) {
	var r struct {
		Role     *stsCredentials `xml:"AssumeRoleResult>Credentials"`
		Identity *stsCredentials `xml:"AssumeRoleWithWebIdentityResult>Credentials"`
	}
	if err := xml.Unmarshal(data, &r); err != nil {
		return aws.Credentials{}, fmt.Errorf("decoding the response: %w", err)
	}
	c := r.Role
	if c == nil {
		c = r.Identity
	}
	if c == nil || c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return aws.Credentials{}, errors.New("the response carries no credentials")
	}
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken,
		CanExpire: true, Expires: c.Expiration, Source: "AssumeRoleProvider"}, nil
}

// do sends req and returns the body of a 2xx answer; other statuses are errors carrying
// the service's error code and message (never the request).
func (c *awsChain) do(req *http.Request, what string) ([]byte, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAWSResponse))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the response: %w", what, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: %s: %s", what, resp.Status, awsErrorText(data))
	}
	return data, nil
}

// awsErrorText is the code and message of an AWS error body (XML Query or JSON), else a
// bounded prefix of it.
func awsErrorText(data []byte) string {
	var x struct {
		Code    string `xml:"Error>Code"`
		Message string `xml:"Error>Message"`
	}
	if xml.Unmarshal(data, &x) == nil && x.Code != "" {
		return x.Code + ": " + x.Message
	}
	var j struct {
		Type    string `json:"__type"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &j) == nil && (j.Type != "" || j.Error != "" || j.Message != "") {
		return strings.TrimSpace(j.Type + j.Error + ": " + j.Message)
	}
	if len(data) > MaxErrorBody {
		data = data[:MaxErrorBody]
	}
	return string(data)
}

// ssoProvider fetches role credentials from IAM Identity Center (GetRoleCredentials) with
// the access token `aws sso login` cached in ~/.aws/sso/cache; with an sso-session, an
// expired token is refreshed through SSO-OIDC CreateToken and the cache file rewritten, as
// the SDK's ssocreds providers do.
type ssoProvider struct {
	c                   *awsChain
	accountID, roleName string
	region              string // the portal's region
	session             *ssoSession
	cacheFile           string
}

func (c *awsChain) sso(p *awsProfile) (aws.CredentialsProvider, error) {
	if err := p.validateSSO(); err != nil {
		return nil, err
	}
	key, region := p.ssoStartURL, p.ssoRegion
	if p.ssoSession != nil {
		key, region = p.ssoSession.name, p.ssoSession.region
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return nil, errors.New("unable to get USER's home directory for cached token")
	}
	sum := sha1.Sum([]byte(key))
	return &ssoProvider{c: c, accountID: p.ssoAccountID, roleName: p.ssoRoleName, region: region, session: p.ssoSession,
		cacheFile: filepath.Join(home, ".aws", "sso", "cache", hex.EncodeToString(sum[:])+".json")}, nil
}

// Retrieve implements aws.CredentialsProvider.
func (p *ssoProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	token, err := p.accessToken(ctx)
	if err != nil {
		return aws.Credentials{}, err
	}
	q := url.Values{"account_id": {p.accountID}, "role_name": {p.roleName}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, serviceEndpoint("SSO", "portal.sso", p.region)+"/federation/credentials?"+q.Encode(), nil)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("SSO GetRoleCredentials: %w", err)
	}
	req.Header.Set("x-amz-sso_bearer_token", token)
	data, err := p.c.do(req, "SSO GetRoleCredentials")
	if err != nil {
		return aws.Credentials{}, err
	}
	creds, err := parseSSOResponse(data)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("SSO GetRoleCredentials: %w", err)
	}
	creds.AccountID = p.accountID
	return creds, nil
}

// parseSSOResponse decodes a GetRoleCredentials response body.
func parseSSOResponse(data []byte) (aws.Credentials, error) {
	var r struct {
		RoleCredentials *struct {
			AccessKeyID     string `json:"accessKeyId"`
			SecretAccessKey string `json:"secretAccessKey"`
			SessionToken    string `json:"sessionToken"`
			Expiration      int64  `json:"expiration"` // epoch milliseconds
		} `json:"roleCredentials"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return aws.Credentials{}, fmt.Errorf("decoding the response: %w", err)
	}
	c := r.RoleCredentials
	if c == nil || c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return aws.Credentials{}, errors.New("the response carries no credentials")
	}
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken,
		CanExpire: true, Expires: time.UnixMilli(c.Expiration).UTC(), Source: "SSOProvider"}, nil
}

// accessToken reads the cached SSO token, refreshing an expired one of an sso-session.
func (p *ssoProvider) accessToken(ctx context.Context) (string, error) {
	invalid := func(err error) error {
		if err == nil {
			return errors.New("the SSO session has expired or is invalid")
		}
		return fmt.Errorf("the SSO session has expired or is invalid: %w", err)
	}
	raw, err := os.ReadFile(p.cacheFile)
	if err != nil {
		return "", invalid(fmt.Errorf("failed to read cached SSO token file, %w", err))
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "", invalid(fmt.Errorf("failed to parse cached SSO token file, %w", err))
	}
	str := func(k string) string { s, _ := fields[k].(string); return s }
	var expires *time.Time
	if s := str("expiresAt"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return "", invalid(fmt.Errorf("failed to parse cached SSO token file, %w", err))
		}
		expires = &t
	}
	expired := expires != nil && p.c.now().After(*expires)
	if p.session == nil {
		if expires == nil || expired {
			return "", invalid(nil)
		}
		return str("accessToken"), nil
	}
	if !expired {
		return str("accessToken"), nil
	}
	if str("clientSecret") == "" || str("clientId") == "" || str("refreshToken") == "" {
		return "", errors.New("refresh cached SSO token failed, cached SSO token is expired, or not present, and cannot be refreshed")
	}
	body, _ := json.Marshal(map[string]string{"clientId": str("clientId"), "clientSecret": str("clientSecret"),
		"grantType": "refresh_token", "refreshToken": str("refreshToken")})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serviceEndpoint("SSO_OIDC", "oidc", p.session.region)+"/token", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("refresh cached SSO token failed, %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	data, err := p.c.do(req, "SSO-OIDC CreateToken")
	if err != nil {
		return "", fmt.Errorf("refresh cached SSO token failed, unable to refresh SSO token, %w", err)
	}
	var r struct {
		AccessToken  string `json:"accessToken"`
		ExpiresIn    int64  `json:"expiresIn"`
		RefreshToken string `json:"refreshToken"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.AccessToken == "" {
		return "", fmt.Errorf("refresh cached SSO token failed, unable to refresh SSO token: no access token in the response (%v)", err)
	}
	fields["accessToken"] = r.AccessToken
	fields["expiresAt"] = p.c.now().Add(time.Duration(r.ExpiresIn) * time.Second).UTC().Format(time.RFC3339)
	fields["refreshToken"] = r.RefreshToken
	out, _ := json.MarshalIndent(fields, "", "  ")
	fi, err := os.Stat(p.cacheFile)
	if err != nil {
		return "", fmt.Errorf("refresh cached SSO token failed, failed to stat cached SSO token file %w", err)
	}
	if err := os.WriteFile(p.cacheFile, out, fi.Mode().Perm()); err != nil {
		return "", fmt.Errorf("refresh cached SSO token failed, unable to cache refreshed SSO token, %w", err)
	}
	return r.AccessToken, nil
}
