package credmask_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/netproxy/credmask"
)

// labelled returns p's environment and marker with every dummy replaced by
// "<NAME>", NAME being the first variable (by name) that carries it, as the
// conformance scenario credmask_value_scan prints them.
func labelled(t *testing.T, p *credmask.Prepared) (env map[string]string, marker []string) {
	t.Helper()
	var pairs [][2]string
	if err := json.Unmarshal([]byte(p.Env[credmask.EnvBrokeredCredentials]), &pairs); err != nil {
		t.Fatal(err)
	}
	label := map[string]string{}
	for _, alias := range []bool{true, false} {
		for _, pr := range pairs {
			name, isAlias := strings.CutPrefix(pr[0], "@alias:")
			if isAlias == alias && label[pr[1]] == "" {
				label[pr[1]] = "<" + name + ">"
			}
		}
	}
	dummies := make([]string, 0, len(label))
	for d := range label {
		dummies = append(dummies, d)
	}
	slices.SortFunc(dummies, func(a, b string) int { return len(b) - len(a) })
	repl := func(s string) string {
		for _, d := range dummies {
			s = strings.ReplaceAll(s, d, label[d])
		}
		return s
	}
	env = map[string]string{}
	for k, v := range p.Env {
		env[k] = repl(v)
	}
	for _, pr := range pairs {
		marker = append(marker, pr[0]+" "+repl(pr[1]))
	}
	slices.Sort(marker)
	return env, marker
}

const (
	pat  = "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8" // 36 bytes: "ghp_" + pat is a 40-byte token
	pat2 = "k8J7h6G5f4D3s2A1p0O9i8U7y6T5r4E3w2Q1"
)

// TestPrepare_ValueScan pins the value scanning probed on 0.171.0 (scan.go), the same
// cases as the conformance scenario credmask_value_scan.
func TestPrepare_ValueScan(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		providers string
		local     bool
		want      map[string]string
		marker    []string
	}{{
		name: "built-in shapes",
		env: map[string]string{
			"A": "ghp_" + pat[:35], "B1": "ghp_" + pat + "-x", "B2": "ghp_" + pat + ".x", "C": "aaghp_" + pat + "bb",
			"D": "sk-proj-abc_def-ghi" + pat + pat + ".end", "E": "x ghp_" + pat2 + "_x-y.z/w y", "F": "ghp_" + pat2 + "x.z/w",
		},
		want: map[string]string{
			"A": "ghp_" + pat[:35], "B1": "<B1>", "B2": "<B2>.x", "C": "aa<C>", "D": "<D>.end", "E": "x ghp_" + pat2 + "_x-y.z/w y",
			"F": "ghp_" + pat2 + "x.z/w",
		},
		marker: []string{"@alias:B1 <B1>", "@alias:B2 <B2>", "@alias:C <C>", "@alias:D <D>", "GH_TOKEN <B1>", "GH_TOKEN <B2>", "GH_TOKEN <C>", "OPENAI_API_KEY <D>"},
	}, {
		name:   "a stray registered elsewhere is replaced inside a path, longest first",
		env:    map[string]string{"A": "ghp_" + pat, "P": "ghp_" + pat + "x.z/w", "Z": "aaghp_" + pat + "bb"},
		want:   map[string]string{"A": "<A>", "P": "<A>x.z/w", "Z": "aa<Z>"},
		marker: []string{"@alias:A <A>", "@alias:P <A>", "@alias:Z <Z>", "GH_TOKEN <A>", "GH_TOKEN <Z>"},
	}, {
		name: "unshaped built-in value only as a whole; enterprise value without GH_HOST reserved",
		env: map[string]string{"GITHUB_TOKEN": " padded-value ", "COPY": "padded-value", "EMBED": "u:padded-value@h",
			"GH_ENTERPRISE_TOKEN": "ghp_" + pat, "Q": "pre ghp_" + pat},
		want:   map[string]string{"GITHUB_TOKEN": "<COPY>", "COPY": "<COPY>", "EMBED": "u:padded-value@h", "GH_ENTERPRISE_TOKEN": "ghp_" + pat, "Q": "pre ghp_" + pat},
		marker: []string{"@alias:COPY <COPY>", "@alias:GITHUB_TOKEN <COPY>", "GITHUB_TOKEN <COPY>"},
	}, {
		name:   "enterprise GH_HOST owns strays",
		env:    map[string]string{"GH_HOST": "ghe.corp.example", "GH_ENTERPRISE_TOKEN": "ghp_" + pat, "R": "x gho_" + pat},
		want:   map[string]string{"GH_ENTERPRISE_TOKEN": "<GH_ENTERPRISE_TOKEN>", "R": "x <R>"},
		marker: []string{"@alias:GH_ENTERPRISE_TOKEN <GH_ENTERPRISE_TOKEN>", "@alias:R <R>", "GH_ENTERPRISE_TOKEN <GH_ENTERPRISE_TOKEN>", "GH_ENTERPRISE_TOKEN <R>"},
	}, {
		name: "custom patterns: paths, boundaries, length",
		env: map[string]string{"CT": "tok_abcdefgh", "V1": "a/tok_abcdefgh", "V2": "tok_abcdefgh/x", "V3": "tok_abcdefgh.txt",
			"V4": "x tok_abcdefgh/ y", "V5": "https://u:tok_abcdefgh@h/tok_qqqqqqqq/", "V6": "file:///t/tok_abcdefgh/x",
			"S1": "atok_wwwwwwwwz", "S2": "-tok_ssssssss.", "S3": "tok_rrrrrrrr-x"},
		providers: `{"c":{"env":["CT"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["http://127.0.0.1:1/"],"auth":["bearer"]}}`,
		want: map[string]string{"CT": "<CT>", "V1": "a/tok_abcdefgh", "V2": "tok_abcdefgh/x", "V3": "<CT>.txt", "V4": "x <CT>/ y",
			"V5": "https://u:<CT>@h/<V5>/", "V6": "file:///t/tok_abcdefgh/x", "S1": "atok_wwwwwwwwz", "S2": "-<S2>.", "S3": "tok_rrrrrrrr-x"},
		marker: []string{"@alias:CT <CT>", "@alias:S2 <S2>", "@alias:V3 <CT>", "@alias:V4 <CT>", "@alias:V5 <CT>", "@alias:V5 <V5>", "CT <CT>", "CT <S2>", "CT <V5>"},
	}, {
		name:      "short custom value: known anywhere outside paths, never new",
		env:       map[string]string{"CT": "ab12", "P1": "xab12y", "P2": "/tmp/ab12/x", "P3": "cd34 x", "P4": "ab12.txt/"},
		providers: `{"c":{"env":["CT"],"patterns":["[a-z]{2}[0-9]{2}"],"url_prefixes":["http://127.0.0.1:1/"],"auth":["bearer"]}}`,
		want:      map[string]string{"CT": "<CT>", "P1": "x<CT>y", "P2": "/tmp/ab12/x", "P3": "cd34 x", "P4": "<CT>.txt/"},
		marker:    []string{"@alias:CT <CT>", "@alias:P1 <CT>", "@alias:P4 <CT>", "CT <CT>"},
	}, {
		name:      "allowLocalBinding: a loopback-only provider stays real",
		env:       map[string]string{"CT": "tok_abcdefgh", "ET": "eok_abcdefgh", "P": "x tok_aaaaaaaa"},
		providers: `{"c":{"env":["CT"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["http://localhost:8080/"],"auth":["bearer"]},"e":{"env":["ET"],"patterns":["eok_[a-z]{8}"],"url_prefixes":["https://example.com/"],"auth":["bearer"]}}`,
		local:     true,
		want:      map[string]string{"CT": "tok_abcdefgh", "ET": "<ET>", "P": "x tok_aaaaaaaa"},
		marker:    []string{"@alias:ET <ET>", "ET <ET>"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &credmask.Config{Masking: true, AllowLocalBinding: tt.local, Rand: credmask.RandFromSeed(9)}
			if tt.providers != "" {
				cfg.Providers = customProviders(t, tt.providers)
			}
			p, err := credmask.Prepare(bashC(), tt.env, cfg)
			if err != nil {
				t.Fatal(err)
			}
			env, marker := labelled(t, p)
			for k, want := range tt.want {
				if env[k] != want {
					t.Errorf("%s = %q, want %q", k, env[k], want)
				}
			}
			if !slices.Equal(marker, tt.marker) {
				t.Errorf("marker\n got %q\nwant %q", marker, tt.marker)
			}
		})
	}
}

// FuzzPrepareScan checks, for any value next to a GitHub token and a custom
// credential: no panic; no registered real value of a built-in shape survives in
// any variable; every dummy in the marker has its real value's length (built-ins) and
// is never a real value.
func FuzzPrepareScan(f *testing.F) {
	for _, s := range []string{"", "x", "ghp_" + pat, "aaghp_" + pat + "bb", "/tmp/tok_abcdefgh/x", "sk-proj-" + pat + pat,
		"https://u:ghp_" + pat + "@h/", "ghp_" + pat + "x.z/w", "tok_abcdefgh tok_zzzzzzzz", "github_pat_" + pat + "_" + pat} {
		f.Add(s, "ghp_"+pat)
	}
	f.Fuzz(func(t *testing.T, v, gh string) {
		env := map[string]string{"GITHUB_TOKEN": gh, "CT": "tok_abcdefgh", "V": v, "W": v + " " + gh}
		p, err := credmask.Prepare(bashC(), env, &credmask.Config{Masking: true, Rand: credmask.RandFromSeed(1),
			Providers: customProviders(t, `{"c":{"env":["CT"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["https://x.example/"],"auth":["bearer"]}}`)})
		if err != nil {
			t.Fatal(err)
		}
		var pairs [][2]string
		if err := json.Unmarshal([]byte(p.Env[credmask.EnvBrokeredCredentials]), &pairs); err != nil {
			t.Fatal(err)
		}
		for _, pr := range pairs {
			if pr[1] == "" || pr[1] == v || pr[1] == gh || pr[1] == "tok_abcdefgh" {
				t.Fatalf("marker pair %q holds no dummy", pr)
			}
		}
		// A GITHUB_TOKEN of a built-in shape is never left in another variable.
		tg := strings.TrimSpace(gh)
		if strings.HasPrefix(tg, "ghp_") && len(tg) >= 40 && strings.Trim(tg[4:], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "" {
			if strings.Contains(p.Env["W"], tg) || strings.Contains(p.Env["V"], tg) {
				t.Fatalf("real token left in V=%q W=%q", p.Env["V"], p.Env["W"])
			}
		}
	})
}

// TestPrepare_SessionRegistry: a session's later launch reuses the dummies of earlier
// ones, lists their pairs when their dummy occurs, and its broker swaps every
// registered credential back (probed on 0.171.0: same connection, two launches).
func TestPrepare_SessionRegistry(t *testing.T) {
	var reg credmask.Registry
	cfg := &credmask.Config{Masking: true, Registry: &reg, Rand: credmask.RandFromSeed(4)}
	p1, err := credmask.Prepare(bashC(), map[string]string{"GITHUB_TOKEN": "ghp_" + pat, "X": "y"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	old := p1.Env["GITHUB_TOKEN"]
	p2, err := credmask.Prepare(bashC(), map[string]string{"GITHUB_TOKEN": "ghp_" + pat2, "Y": "ghp_" + pat}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p2.Env["Y"] != old || p2.Env["GITHUB_TOKEN"] == old {
		t.Errorf("second launch: Y=%q GITHUB_TOKEN=%q, want Y to keep the first dummy %q", p2.Env["Y"], p2.Env["GITHUB_TOKEN"], old)
	}
	var pairs [][2]string
	if err := json.Unmarshal([]byte(p2.Env[credmask.EnvBrokeredCredentials]), &pairs); err != nil {
		t.Fatal(err)
	}
	cur := p2.Env["GITHUB_TOKEN"]
	want := [][2]string{{"@alias:GITHUB_TOKEN", cur}, {"@alias:GITHUB_TOKEN", old}, {"@alias:Y", old}, {"GITHUB_TOKEN", cur}, {"GITHUB_TOKEN", old}}
	slices.SortFunc(want, func(a, b [2]string) int { return strings.Compare(a[0]+" "+a[1], b[0]+" "+b[1]) })
	if !slices.Equal(pairs, want) {
		t.Errorf("marker %q, want %q", pairs, want)
	}
	h := map[string][]string{"Authorization": {"Bearer " + old}}
	p2.Broker.RewriteHeaders(credmask.Request{Scheme: "https", Host: "api.github.com"}, h)
	if h["Authorization"][0] != "Bearer ghp_"+pat || reg.Len() != 2 {
		t.Errorf("first launch's dummy not swapped by the second launch's broker (registry %d)", reg.Len())
	}
	// Another session starts empty.
	p3, err := credmask.Prepare(bashC(), map[string]string{"GITHUB_TOKEN": "ghp_" + pat}, &credmask.Config{Masking: true, Registry: &credmask.Registry{}})
	if err != nil {
		t.Fatal(err)
	}
	if p3.Env["GITHUB_TOKEN"] == old {
		t.Error("a new session reused a dummy")
	}
}
