package direct_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/coder/websocket"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/registry/direct"
	"github.com/execlab/executor/registry/direct/directtest"
)

// unsignedNoise are headers left out of the comparison: transport details that are neither
// signed nor read by the front (the reference's reqwest offers zstd, net/http only gzip) and
// the per-attempt x-request-id our remote loop adds.
var unsignedNoise = map[string]bool{"accept-encoding": true, "x-request-id": true}

// shape is one request, normalized for comparison with the reference's.
type shape struct {
	Method, Path, Query, Body string
	Headers                   []string          // names, sorted
	Values                    map[string]string // values of the headers that must match
}

func shapeOf(r directtest.Request) shape {
	s := shape{Method: r.Method, Path: r.Path, Query: r.Query, Body: r.Body, Values: map[string]string{}}
	for _, k := range r.SortedHeaderNames() {
		if unsignedNoise[k] {
			continue
		}
		s.Headers = append(s.Headers, k)
		switch k {
		case "authorization", "content-type", "accept", "upgrade", "connection", "sec-websocket-version", "x-amz-security-token":
			s.Values[k] = r.Header[k]
		}
	}
	sort.Strings(s.Headers)
	return s
}

// TestDirect_RequestsMatchReference runs each reference release with `exec-server --remote
// URL --remote-transport direct --aws-sigv4` against the same verifying endpoint as ours,
// and compares what each sends: method, path, query, body, header names, and the
// authorization with the date and signature masked (so the signed header set and the
// credential scope). Both must verify with the independent verifier.
func TestDirect_RequestsMatchReference(t *testing.T) {
	const envID = "env-interop"
	for _, token := range []string{"", "interop-session-token"} {
		name := "long-term"
		if token != "" {
			name = "session-token"
		}
		t.Run(name, func(t *testing.T) {
			v := &directtest.Verifier{Keys: map[string]directtest.Key{testKey: {Secret: testSecret, Token: token}},
				Region: testRegion, Service: direct.DefaultService}
			ours := oursRequests(t, v, envID, token)
			refbin.ForEachRelease(t, func(t *testing.T, r refbin.Release) {
				theirs := referenceRequests(t, r.Path, v, envID, token)
				if len(theirs) < 2 || theirs[0].Status != 200 || theirs[1].Status != 101 {
					t.Fatalf("reference requests = %+v, want a verified registration and upgrade", theirs)
				}
				for i := range 2 {
					o, th := shapeOf(ours[i]), shapeOf(theirs[i])
					t.Logf("request %d: %+v", i, th)
					if !reflect.DeepEqual(o, th) {
						t.Errorf("request %d differs:\nours   %+v\ntheirs %+v", i, o, th)
					}
				}
			})
		})
	}
}

func oursRequests(t *testing.T, v *directtest.Verifier, envID, token string) []directtest.Request {
	ep := directtest.NewEndpoint(t, v, nil)
	ctx := context.Background()
	s := mustSigner(t, direct.SignerOptions{Region: testRegion,
		Credentials: credentials.NewStaticCredentialsProvider(testKey, testSecret, token)})
	reg, err := direct.Register(ctx, direct.Options{BaseURL: ep.URL, EnvironmentID: envID, Signer: s})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	c, err := direct.Dial(ctx, reg.URL, direct.DialOptions{Signer: s})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
	return ep.Requests()
}

// referenceRequests runs the reference until its direct socket answered an initialize.
func referenceRequests(t *testing.T, bin string, v *directtest.Verifier, envID, token string) []directtest.Request {
	answered := make(chan struct{}, 1)
	ep := directtest.NewEndpoint(t, v, func(ctx context.Context, c *websocket.Conn) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if c.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"initialize","params":{"clientName":"interop"}}`)) != nil {
			return
		}
		_, msg, err := c.Read(ctx)
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err == nil && json.Unmarshal(msg, &resp) == nil && resp.ID == 1 && len(resp.Result) > 0 {
			select {
			case answered <- struct{}{}:
			default:
			}
		}
	})
	home := refbin.CodexHome(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "exec-server", "--remote", ep.URL, "--remote-transport", "direct",
		"--aws-sigv4", "--environment-id", envID)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "CODEX_HOME=" + home,
		"AWS_CONFIG_FILE=" + filepath.Join(dir, "c"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "k"),
		"AWS_EC2_METADATA_DISABLED=true", "AWS_ACCESS_KEY_ID=" + testKey, "AWS_SECRET_ACCESS_KEY=" + testSecret,
		"AWS_REGION=" + testRegion}
	if token != "" {
		cmd.Env = append(cmd.Env, "AWS_SESSION_TOKEN="+token)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the reference: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-answered:
	case err := <-exited:
		t.Fatalf("reference exited before answering on the direct socket: %v\n%s", err, stderr.String())
	case <-ctx.Done():
	}
	_ = cmd.Process.Kill()
	<-exited
	return ep.Requests()
}
