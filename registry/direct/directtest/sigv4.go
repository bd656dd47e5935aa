// Package directtest is a local AWS-style endpoint for tests of the direct transport: it
// verifies SigV4 with its own implementation, written from the AWS Signature Version 4
// specification (canonical request, string to sign, HMAC-SHA256 key chain) and sharing no
// code with the AWS SDK the executor signs with, then accepts the registration and the
// WebSocket upgrade. It listens on 127.0.0.1 only. Import it only from _test.go files.
package directtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Spec constants (AWS SigV4).
const (
	algorithm  = "AWS4-HMAC-SHA256"
	amzDateFmt = "20060102T150405Z"
	// MaxSkew is how far x-amz-date may be from the verifier's clock: AWS allows 15 minutes.
	MaxSkew = 15 * time.Minute
)

// Key is one access key the verifier accepts.
type Key struct {
	Secret string
	// Token, when not empty, must be presented as a signed x-amz-security-token.
	Token string
}

// Verifier checks SigV4 Authorization headers. It is immutable once used.
type Verifier struct {
	Keys    map[string]Key // access key id → key
	Region  string
	Service string
	Now     func() time.Time // nil: time.Now
}

// authHeader is the parsed Authorization header.
type authHeader struct {
	accessKey, date, region, service string
	signedHeaders                    []string
	signature                        string
}

func parseAuth(v string) (authHeader, error) {
	var a authHeader
	rest, ok := strings.CutPrefix(v, algorithm+" ")
	if !ok {
		return a, errors.New("unsupported algorithm")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return a, errors.New("malformed authorization")
		}
		fields[k] = val
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return a, errors.New("malformed credential scope")
	}
	a.accessKey, a.date, a.region, a.service = scope[0], scope[1], scope[2], scope[3]
	a.signedHeaders = strings.Split(fields["SignedHeaders"], ";")
	a.signature = fields["Signature"]
	if a.signature == "" || fields["SignedHeaders"] == "" {
		return a, errors.New("missing signature or signed headers")
	}
	return a, nil
}

// Verify checks r's signature over body. The error text is safe to send back.
func (v *Verifier) Verify(r *http.Request, body []byte) error {
	a, err := parseAuth(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	key, ok := v.Keys[a.accessKey]
	if !ok {
		return errors.New("unknown access key")
	}
	if a.region != v.Region || a.service != v.Service {
		return errors.New("credential scope names another region or service")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse(amzDateFmt, amzDate)
	if err != nil {
		return errors.New("missing or malformed x-amz-date")
	}
	if a.date != amzDate[:8] {
		return errors.New("credential date does not match x-amz-date")
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	if d := now().Sub(t); d > MaxSkew || d < -MaxSkew {
		return errors.New("Signature expired: request time is outside the allowed skew")
	}
	signed := map[string]bool{}
	for i, h := range a.signedHeaders {
		if h != strings.ToLower(h) || (i > 0 && a.signedHeaders[i-1] >= h) {
			return errors.New("signed headers must be lower case and sorted")
		}
		signed[h] = true
	}
	if !signed["host"] || !signed["x-amz-date"] {
		return errors.New("host and x-amz-date must be signed")
	}
	if key.Token != "" && (!signed["x-amz-security-token"] || r.Header.Get("X-Amz-Security-Token") != key.Token) {
		return errors.New("missing or wrong security token")
	}
	creq := canonicalRequest(r, a.signedHeaders, body)
	sts := strings.Join([]string{algorithm, amzDate, scopeOf(a), hexSHA256([]byte(creq))}, "\n")
	want := hex.EncodeToString(hmacSHA256(signingKey(key.Secret, a.date, a.region, a.service), sts))
	if !hmac.Equal([]byte(want), []byte(a.signature)) {
		return errors.New("The request signature we calculated does not match the signature you provided")
	}
	return nil
}

func scopeOf(a authHeader) string {
	return a.date + "/" + a.region + "/" + a.service + "/aws4_request"
}

// canonicalRequest is the spec's CanonicalRequest:
//
//	Method \n CanonicalURI \n CanonicalQueryString \n CanonicalHeaders \n SignedHeaders \n HexPayloadHash
func canonicalRequest(r *http.Request, signedHeaders []string, body []byte) string {
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	b.WriteString(canonicalURI(r.URL) + "\n")
	b.WriteString(canonicalQuery(r.URL.RawQuery) + "\n")
	for _, h := range signedHeaders {
		var vals []string
		if h == "host" {
			vals = []string{r.Host}
		} else {
			vals = r.Header.Values(h)
		}
		for i, v := range vals {
			vals[i] = strings.Join(strings.Fields(v), " ")
		}
		b.WriteString(h + ":" + strings.Join(vals, ",") + "\n")
	}
	b.WriteString("\n" + strings.Join(signedHeaders, ";") + "\n")
	b.WriteString(hexSHA256(body))
	return b.String()
}

// canonicalURI encodes the path as sent once more (every service but S3 double-encodes),
// keeping '/'.
func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	return uriEncode(p, false)
}

// canonicalQuery decodes each name and value, encodes them per the spec and sorts by name,
// then value.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type kv struct{ k, v string }
	var kvs []kv
	for _, p := range strings.Split(raw, "&") {
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			dk, dv = k, v
		}
		kvs = append(kvs, kv{uriEncode(dk, true), uriEncode(dv, true)})
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].k != kvs[j].k {
			return kvs[i].k < kvs[j].k
		}
		return kvs[i].v < kvs[j].v
	})
	parts := make([]string, len(kvs))
	for i, p := range kvs {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&")
}

// uriEncode is the spec's UriEncode: unreserved characters as is, everything else %XX in
// upper case; '/' too when encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// signingKey is HMAC("AWS4"+secret, date) → region → service → "aws4_request".
func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func hexSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
