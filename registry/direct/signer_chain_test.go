package direct

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// fakeAWS is a 127.0.0.1 stand-in for STS (Query API), the IAM Identity Center portal,
// SSO-OIDC and a container credential endpoint. It records the requests it saw.
type fakeAWS struct {
	*httptest.Server
	seen chan []string // holds the requests seen ("kind detail…"); a one-slot channel as the lock
}

func newFakeAWS(t *testing.T) *fakeAWS {
	f := &fakeAWS{seen: make(chan []string, 1)}
	f.seen <- nil
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		rec := func(s string) { f.seen <- append(<-f.seen, s) }
		exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/":
			action := r.PostForm.Get("Action")
			switch action {
			case "AssumeRoleWithWebIdentity":
				rec(fmt.Sprintf("sts %s %s %s %s", action, r.PostForm.Get("RoleArn"), r.PostForm.Get("RoleSessionName"), r.PostForm.Get("WebIdentityToken")))
			case "AssumeRole":
				auth := r.Header.Get("Authorization")
				cred, _, _ := strings.Cut(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 Credential="), ",")
				rec(fmt.Sprintf("sts %s %s %s %s", action, r.PostForm.Get("RoleArn"), r.PostForm.Get("DurationSeconds"), cred))
			default:
				w.WriteHeader(400)
				fmt.Fprint(w, `<ErrorResponse><Error><Code>InvalidAction</Code><Message>no</Message></Error></ErrorResponse>`)
				return
			}
			fmt.Fprintf(w, `<%sResponse><%sResult><Credentials><AccessKeyId>ASIASTS</AccessKeyId><SecretAccessKey>sts-secret</SecretAccessKey><SessionToken>sts-token</SessionToken><Expiration>%s</Expiration></Credentials></%sResult></%sResponse>`,
				action, action, exp, action, action)
		case r.URL.Path == "/federation/credentials":
			rec(fmt.Sprintf("sso %s %s %s", r.URL.Query().Get("account_id"), r.URL.Query().Get("role_name"), r.Header.Get("x-amz-sso_bearer_token")))
			if r.Header.Get("x-amz-sso_bearer_token") == "" {
				w.WriteHeader(401)
				fmt.Fprint(w, `{"message":"Session token not found or invalid"}`)
				return
			}
			fmt.Fprintf(w, `{"roleCredentials":{"accessKeyId":"ASIASSO","secretAccessKey":"sso-secret","sessionToken":"sso-token","expiration":%d}}`, time.Now().Add(time.Hour).UnixMilli())
		case r.URL.Path == "/token":
			var in map[string]string
			_ = json.NewDecoder(r.Body).Decode(&in)
			rec(fmt.Sprintf("oidc %s %s", in["grantType"], in["refreshToken"]))
			fmt.Fprint(w, `{"accessToken":"fresh-token","expiresIn":3600,"refreshToken":"refresh-2","tokenType":"Bearer"}`)
		case r.URL.Path == "/creds":
			rec("container " + r.Header.Get("Authorization"))
			fmt.Fprintf(w, `{"AccessKeyId":"ASIACONT","SecretAccessKey":"cont-secret","Token":"cont-token","Expiration":%q}`, exp)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// requests returns the requests seen and forgets them.
func (f *fakeAWS) requests() []string {
	seen := <-f.seen
	f.seen <- nil
	return seen
}

// isolatedAWS clears the AWS environment, points the shared files and HOME into a fresh
// directory and STS, SSO and SSO-OIDC at f; it returns the directory.
func isolatedAWS(t *testing.T, f *fakeAWS) string {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY",
		"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
		"AWS_ENDPOINT_URL", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", dir)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	if f != nil {
		t.Setenv("AWS_ENDPOINT_URL_STS", f.URL)
		t.Setenv("AWS_ENDPOINT_URL_SSO", f.URL)
		t.Setenv("AWS_ENDPOINT_URL_SSO_OIDC", f.URL)
	}
	return dir
}

// writeFile writes text to path, creating its directory.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	err := os.MkdirAll(path[:strings.LastIndexByte(path, '/')], 0o700)
	if err == nil {
		err = os.WriteFile(path, []byte(text), 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// retrieve resolves o and fetches credentials once.
func retrieve(t *testing.T, o SignerOptions) (string, string, error) {
	t.Helper()
	region, p, err := resolveAWS(o, time.Now)
	if err != nil {
		return "", "", err
	}
	c, err := p.Retrieve(t.Context())
	if err != nil {
		return region, "", err
	}
	return region, c.AccessKeyID + "/" + c.SecretAccessKey + "/" + c.SessionToken, nil
}

func TestResolveAWS_Chain(t *testing.T) {
	f := newFakeAWS(t)
	for _, tc := range []struct {
		name   string
		env    map[string]string
		config string
		creds  string
		opts   SignerOptions
		region string
		want   string
		seen   []string
	}{
		{name: "env keys (legacy names)", env: map[string]string{"AWS_ACCESS_KEY": "AKIDOLD", "AWS_SECRET_KEY": "old", "AWS_DEFAULT_REGION": "eu-west-1"},
			region: "eu-west-1", want: "AKIDOLD/old/"},
		{name: "env keys beat AWS_PROFILE", env: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env", "AWS_PROFILE": "p"},
			config: "[profile p]\nregion = us-east-2\n", creds: "[p]\naws_access_key_id = AKIDP\naws_secret_access_key = p\n",
			region: "us-east-2", want: "AKIDENV/env/"},
		{name: "env web identity", env: map[string]string{"AWS_WEB_IDENTITY_TOKEN_FILE": "@token", "AWS_ROLE_ARN": "arn:aws:iam::1:role/w",
			"AWS_ROLE_SESSION_NAME": "sess", "AWS_REGION": "us-west-2"},
			region: "us-west-2", want: "ASIASTS/sts-secret/sts-token", seen: []string{"sts AssumeRoleWithWebIdentity arn:aws:iam::1:role/w sess jwt-1"}},
		{name: "profile web identity", config: "[default]\nregion = us-west-1\nrole_arn = arn:aws:iam::1:role/p\nweb_identity_token_file = @token\nrole_session_name = s2\n",
			region: "us-west-1", want: "ASIASTS/sts-secret/sts-token", seen: []string{"sts AssumeRoleWithWebIdentity arn:aws:iam::1:role/p s2 jwt-1"}},
		{name: "source_profile assume role", opts: SignerOptions{Profile: "dev"},
			config: "[profile dev]\nregion = ap-south-1\nrole_arn = arn:aws:iam::2:role/dev\nsource_profile = base\nduration_seconds = 3600\n[profile base]\nregion = x\n",
			creds:  "[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = base\n",
			region: "ap-south-1", want: "ASIASTS/sts-secret/sts-token", seen: []string{"sts AssumeRole arn:aws:iam::2:role/dev 3600 AKIDBASE/" + time.Now().UTC().Format("20060102") + "/ap-south-1/sts/aws4_request"}},
		{name: "self-sourced role", opts: SignerOptions{Profile: "self", Region: "us-east-1"},
			config: "[profile self]\nrole_arn = arn:aws:iam::3:role/s\nsource_profile = self\n", creds: "[self]\naws_access_key_id = AKIDSELF\naws_secret_access_key = s\n",
			region: "us-east-1", want: "ASIASTS/sts-secret/sts-token", seen: []string{"sts AssumeRole arn:aws:iam::3:role/s 900 AKIDSELF/" + time.Now().UTC().Format("20060102") + "/us-east-1/sts/aws4_request"}},
		{name: "credential_source Environment", opts: SignerOptions{Profile: "cs"},
			config: "[profile cs]\nregion = eu-north-1\nrole_arn = arn:aws:iam::4:role/c\ncredential_source = Environment\n",
			region: "eu-north-1", want: "ASIASTS/sts-secret/sts-token"},
		{name: "credential_process", config: "[default]\nregion = r\ncredential_process = printf '{\"Version\":1,\"AccessKeyId\":\"AKIDPROC\",\"SecretAccessKey\":\"proc\"}'\n",
			region: "r", want: "AKIDPROC/proc/"},
		{name: "legacy SSO", config: "[default]\nregion = r\nsso_start_url = https://start\nsso_region = us-east-1\nsso_account_id = 111\nsso_role_name = Admin\n",
			region: "r", want: "ASIASSO/sso-secret/sso-token", seen: []string{"sso 111 Admin legacy-token"}},
		{name: "sso-session with an expired token", opts: SignerOptions{Profile: "s"},
			config: "[profile s]\nregion = r\nsso_session = corp\nsso_account_id = 222\nsso_role_name = Dev\n[sso-session corp]\nsso_region = eu-west-1\nsso_start_url = https://corp\n",
			region: "r", want: "ASIASSO/sso-secret/sso-token", seen: []string{"oidc refresh_token refresh-1", "sso 222 Dev fresh-token"}},
		{name: "container full URI", env: map[string]string{"AWS_CONTAINER_CREDENTIALS_FULL_URI": "@creds", "AWS_CONTAINER_AUTHORIZATION_TOKEN": "tok", "AWS_REGION": "r"},
			region: "r", want: "ASIACONT/cont-secret/cont-token", seen: []string{"container tok"}},
		{name: "inline comment, quotes and sub-properties", opts: SignerOptions{Profile: "q"},
			config: "[profile q] # c\ns3 =\n  max_concurrency = 2\nregion = \"eu-central-1\" ; c\n", creds: "[q]\naws_access_key_id: AKIDQ\naws_secret_access_key = 'q'\n",
			region: "eu-central-1", want: "AKIDQ/q/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := isolatedAWS(t, f)
			f.requests()
			writeFile(t, dir+"/token", "jwt-1")
			legacy := fmt.Sprintf(`{"accessToken":"legacy-token","expiresAt":%q}`, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
			writeFile(t, ssoCacheFile("https://start"), legacy)
			writeFile(t, ssoCacheFile("corp"), fmt.Sprintf(`{"accessToken":"old","expiresAt":%q,"refreshToken":"refresh-1","clientId":"c","clientSecret":"s","region":"eu-west-1","extra":7}`,
				time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)))
			for k, v := range tc.env {
				v = strings.ReplaceAll(v, "@token", dir+"/token")
				v = strings.ReplaceAll(v, "@creds", f.URL+"/creds")
				t.Setenv(k, v)
			}
			if tc.name == "credential_source Environment" {
				t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
				t.Setenv("AWS_SECRET_ACCESS_KEY", "env")
			}
			writeFile(t, dir+"/config", strings.ReplaceAll(tc.config, "@token", dir+"/token"))
			writeFile(t, dir+"/credentials", tc.creds)
			region, got, err := retrieve(t, tc.opts)
			if err != nil || region != tc.region || got != tc.want {
				t.Fatalf("region, creds, err = %q, %q, %v; want %q, %q", region, got, err, tc.region, tc.want)
			}
			if seen := f.requests(); tc.seen != nil && strings.Join(seen, "\n") != strings.Join(tc.seen, "\n") {
				t.Errorf("requests = %q, want %q", seen, tc.seen)
			}
			if tc.name == "sso-session with an expired token" {
				b, _ := os.ReadFile(ssoCacheFile("corp"))
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil || m["accessToken"] != "fresh-token" || m["refreshToken"] != "refresh-2" || m["extra"] != float64(7) {
					t.Errorf("rewritten token cache = %s (%v)", b, err)
				}
			}
		})
	}
}

// ssoCacheFile is where `aws sso login` caches the token for key under $HOME.
func ssoCacheFile(key string) string {
	p, _ := (&awsChain{}).sso(&awsProfile{ssoSessionName: "x", ssoSession: &ssoSession{name: key, region: "r", startURL: "u"}})
	return p.(*ssoProvider).cacheFile
}

func TestResolveAWS_Errors(t *testing.T) {
	for _, tc := range []struct {
		name, config, creds string
		opts                SignerOptions
		env                 map[string]string
		want                string
	}{
		{name: "explicit profile missing", opts: SignerOptions{Profile: "nope"}, want: "failed to get shared config profile, nope"},
		{name: "AWS_PROFILE missing", env: map[string]string{"AWS_PROFILE": "nope"}, want: "failed to get shared config profile, nope"},
		{name: "partial credentials", opts: SignerOptions{Profile: "p"}, creds: "[p]\naws_access_key_id = A\n", want: "partial credentials found for profile p"},
		{name: "role without arn", opts: SignerOptions{Profile: "p"}, config: "[profile p]\nsource_profile = q\n", want: "credential type source_profile requires role_arn, profile p"},
		{name: "two credential types", opts: SignerOptions{Profile: "p"}, config: "[profile p]\nrole_arn = a\nsource_profile = q\ncredential_process = x\n", want: "only one credential type"},
		{name: "missing source profile", opts: SignerOptions{Profile: "p"}, config: "[profile p]\nrole_arn = a\nsource_profile = q\n", want: "failed to load assume role a, of profile q"},
		{name: "mfa", opts: SignerOptions{Profile: "p"}, config: "[profile p]\nrole_arn = a\nsource_profile = q\nmfa_serial = m\n[profile q]\naws_access_key_id = A\naws_secret_access_key = B\n", want: "MFA enabled"},
		{name: "sso incomplete", opts: SignerOptions{Profile: "p"}, config: "[profile p]\nsso_start_url = u\n", want: "missing required configuration: sso_region, sso_account_id, sso_role_name"},
		{name: "sso-session section missing", opts: SignerOptions{Profile: "p"}, config: "[profile p]\nsso_session = s\n", want: "failed to find SSO session section, s"},
		{name: "bad credential_source", opts: SignerOptions{Profile: "p"}, config: "[profile p]\nrole_arn = a\ncredential_source = Nope\n", want: "credential_source values must be"},
		{name: "login_session", opts: SignerOptions{Profile: "p"}, config: "[profile p]\nlogin_session = arn:x\n", want: "does not support"},
		{name: "container host not allowed", env: map[string]string{"AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://192.0.2.1/creds"}, want: "only loopback/ecs/eks hosts are allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := isolatedAWS(t, nil)
			writeFile(t, dir+"/config", tc.config)
			writeFile(t, dir+"/credentials", tc.creds)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if _, _, err := resolveAWS(tc.opts, time.Now); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestResolveAWS_FetchErrors(t *testing.T) {
	f := newFakeAWS(t)
	dir := isolatedAWS(t, f)
	// A legacy SSO token that expired is not refreshed.
	writeFile(t, ssoCacheFile("https://start"), fmt.Sprintf(`{"accessToken":"t","expiresAt":%q}`, time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)))
	writeFile(t, dir+"/config", "[default]\nregion = r\nsso_start_url = https://start\nsso_region = us-east-1\nsso_account_id = 1\nsso_role_name = R\n")
	if _, _, err := retrieve(t, SignerOptions{}); err == nil || !strings.Contains(err.Error(), "the SSO session has expired or is invalid") {
		t.Errorf("expired legacy token: err = %v", err)
	}
	// A missing web identity token file.
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", dir+"/missing")
	t.Setenv("AWS_ROLE_ARN", "arn")
	if _, _, err := retrieve(t, SignerOptions{}); err == nil || !strings.Contains(err.Error(), "failed to retrieve jwt") {
		t.Errorf("missing token file: err = %v", err)
	}
	// STS answering with an error.
	t.Setenv("AWS_ENDPOINT_URL_STS", f.URL+"/nowhere")
	writeFile(t, dir+"/tok", "jwt")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", dir+"/tok")
	if _, _, err := retrieve(t, SignerOptions{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("STS 404: err = %v", err)
	}
}

func TestParseAWSINI(t *testing.T) {
	s := parseAWSINI("top = ignored\n[profile  a]\nk = v # c\nK2: \"q\"\ncont = x\n  more\n# comment\n; comment\nsub =\n  a = 1\n  b = 2\n[default]\naws_access_key_id = A\n")
	a, d := s["profile a"], s["default"]
	if a == nil || d == nil || len(s) != 2 {
		t.Fatalf("sections = %v", s)
	}
	want := map[string]string{"k": "v", "k2": "q", "cont": "x\nmore", "sub": ""}
	if fmt.Sprint(a.values) != fmt.Sprint(want) || a.partial {
		t.Errorf("profile a = %v (partial %v), want %v", a.values, a.partial, want)
	}
	if !d.partial {
		t.Errorf("default with only an access key is not partial")
	}
}

func FuzzParseAWSINI(f *testing.F) {
	f.Add("[profile a]\nk = v ; c\n  sub = 1\n\tcont\n[default]\naws_access_key_id=A\n")
	f.Add("[ sso-session  x ]\nsso_region: r\n")
	f.Fuzz(func(t *testing.T, text string) {
		for name, s := range parseAWSINI(text) {
			if s == nil || s.values == nil {
				t.Fatalf("section %q is nil", name)
			}
			for k := range s.values {
				if k != strings.ToLower(k) {
					t.Fatalf("key %q is not lower-case", k)
				}
			}
		}
	})
}

func FuzzParseCredentialResponses(f *testing.F) {
	f.Add([]byte(`<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>S</SecretAccessKey><Expiration>2026-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>`))
	f.Add([]byte(`{"roleCredentials":{"accessKeyId":"A","secretAccessKey":"S","sessionToken":"T","expiration":1}}`))
	f.Add([]byte(`<ErrorResponse><Error><Code>C</Code><Message>M</Message></Error></ErrorResponse>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) (aws.Credentials, error){parseSTSResponse, parseSSOResponse} {
			if c, err := parse(data); err == nil && (c.AccessKeyID == "" || c.SecretAccessKey == "" || !c.CanExpire) {
				t.Fatalf("accepted credentials without keys or expiry: %+v", c)
			}
		}
		if len(awsErrorText(data)) > MaxErrorBody+len(data) {
			t.Fatal("error text longer than its input")
		}
	})
}

// AWS_CA_BUNDLE (else the profile's ca_bundle) replaces the trusted roots of the chain's
// own calls, as in the SDK: STS over TLS with a test certificate works only with it.
func TestResolveAWS_CABundle(t *testing.T) {
	f := newFakeAWS(t)
	tlsSrv := httptest.NewTLSServer(f.Config.Handler)
	t.Cleanup(tlsSrv.Close)
	dir := isolatedAWS(t, f)
	writeFile(t, dir+"/token", "jwt-1")
	writeFile(t, dir+"/ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})))
	for k, v := range map[string]string{"AWS_ENDPOINT_URL_STS": tlsSrv.URL, "AWS_WEB_IDENTITY_TOKEN_FILE": dir + "/token",
		"AWS_ROLE_ARN": "arn:aws:iam::1:role/w", "AWS_REGION": "r", "AWS_CA_BUNDLE": ""} {
		t.Setenv(k, v)
	}
	if _, _, err := retrieve(t, SignerOptions{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the bundle: err = %v, want a certificate error", err)
	}
	writeFile(t, dir+"/config", "[default]\nca_bundle = "+dir+"/ca.pem\n")
	if _, got, err := retrieve(t, SignerOptions{}); err != nil || got != "ASIASTS/sts-secret/sts-token" {
		t.Fatalf("with the profile's ca_bundle: %q, %v", got, err)
	}
	t.Setenv("AWS_CA_BUNDLE", dir+"/missing.pem")
	if _, _, err := retrieve(t, SignerOptions{}); err == nil || !strings.Contains(err.Error(), "failed to load custom CA bundle PEM file") {
		t.Fatalf("missing bundle: err = %v", err)
	}
}
