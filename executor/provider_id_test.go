package executor

import (
	"regexp"
	"runtime/debug"
	"testing"
)

func TestProviderIDFrom(t *testing.T) {
	rev := func(r, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: r}, {Key: "vcs.modified", Value: modified}}
	}
	build := func(version string, s []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/execlab/executor", Version: version}, Settings: s}
	}
	format := regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	a := providerIDFrom(build("(devel)", rev("5b4d4b8507b40dfe85e90f36615a9e00c9d7c3c8", "false")), "linux", "amd64")
	if !format.MatchString(a) {
		t.Fatalf("providerId %q does not look like sha256:<64 hex>", a)
	}
	for name, c := range map[string]struct {
		id   string
		same bool
	}{
		"same build":     {providerIDFrom(build("(devel)", rev("5b4d4b8507b40dfe85e90f36615a9e00c9d7c3c8", "false")), "linux", "amd64"), true},
		"other commit":   {providerIDFrom(build("(devel)", rev("a75a5d4000000000000000000000000000000000", "false")), "linux", "amd64"), false},
		"dirty tree":     {providerIDFrom(build("(devel)", rev("5b4d4b8507b40dfe85e90f36615a9e00c9d7c3c8", "true")), "linux", "amd64"), false},
		"other target":   {providerIDFrom(build("(devel)", rev("5b4d4b8507b40dfe85e90f36615a9e00c9d7c3c8", "false")), "linux", "arm64"), false},
		"module version": {providerIDFrom(build("v1.2.3", rev("5b4d4b8507b40dfe85e90f36615a9e00c9d7c3c8", "false")), "linux", "amd64"), false},
	} {
		if (c.id == a) != c.same || c.id == "" {
			t.Errorf("%s: %q vs %q, want same=%v", name, c.id, a, c.same)
		}
	}
	// The reference's published values are never ours.
	for _, ref := range []string{"sha256:d9abac9af8012b2dca3f4cfcc77c89636c9b8f757089a5454c39e60264dabed8"} {
		if a == ref {
			t.Fatalf("providerId equals the reference's %s", ref)
		}
	}
	for name, bi := range map[string]*debug.BuildInfo{
		"no build info":   nil,
		"unstamped devel": build("(devel)", nil),
		"empty version":   build("", nil),
	} {
		if id := providerIDFrom(bi, "linux", "amd64"); id != "" {
			t.Errorf("%s: providerId %q, want it omitted", name, id)
		}
	}
	if id := providerIDFrom(build("v1.2.3", nil), "linux", "amd64"); !format.MatchString(id) {
		t.Errorf("released module without VCS info: providerId %q", id)
	}
}
