package e2e_test

import (
	"context"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// podmanEnv is the environment of every podman call: the shipped containers.conf.
func podmanEnv(t *testing.T) []string {
	_, file, _, _ := runtime.Caller(0)
	conf := filepath.Join(filepath.Dir(file), "testdata", "containers.conf")
	return append(os.Environ(), "CONTAINERS_CONF="+conf)
}

func podman(t *testing.T, ctx context.Context, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "podman", args...)
	cmd.Env = podmanEnv(t)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// staticTool finds name on PATH and checks it is a static ELF (no interpreter), as an image
// FROM scratch needs.
func staticTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	f, err := elf.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_INTERP {
			return ""
		}
	}
	return p
}

// TestContainer_RemoteInsideContainer builds the image of deploy/container/
// Containerfile.prebuilt from a CGO_ENABLED=0 binary and the static busybox (no registry
// pull: FROM scratch, local context), runs `executor remote --environment-id ci-container`
// inside it against a `registry serve` on the host, and runs `executor exec` through that
// registry: the command reads the image's marker file and the container's hostname, which
// exist only inside the container, and its exit code comes back.
func TestContainer_RemoteInsideContainer(t *testing.T) {
	busybox := staticTool(t, "busybox")
	_, perr := exec.LookPath("podman")
	_, rerr := exec.LookPath("runc")
	if busybox == "" || perr != nil || rerr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("podman, runc and a static busybox (busybox-static) are required under CI=true (.ci/run installs them)")
		}
		t.Skip("podman, runc or a static busybox missing")
	}
	if _, err := os.Stat("/etc/executor-image"); err == nil {
		t.Fatal("/etc/executor-image exists on the host: it would not prove the command ran in the container")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	bctx := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(bctx, "executor"), "./cmd/executor")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the static binary: %v\n%s", err, out)
	}
	copyFile(t, busybox, filepath.Join(bctx, "busybox"))
	image := "localhost/executor-e2e:" + randHex(6)
	if out, err := podman(t, ctx, "build", "-q", "-f", filepath.Join(root, "deploy", "container", "Containerfile.prebuilt"), "-t", image, bctx); err != nil {
		t.Fatalf("podman build: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		// The --rm container's storage may still be going away: retry a few times.
		var out string
		var err error
		for range 5 {
			if out, err = podman(t, context.Background(), "rmi", "-f", image); err == nil {
				return
			}
			time.Sleep(time.Second)
		}
		t.Errorf("podman rmi %s: %v\n%s", image, err, out)
	})

	const env = "ci-container"
	token := "tok_" + randHex(16)
	tokens := writeTokenFile(t, token, env)
	reg := startRegistryNode(t, "", freeAddr(t), filepath.Join(t.TempDir(), "registry.db"), tokens, "")

	name := "executor-e2e-" + randHex(6)
	run := exec.CommandContext(ctx, "podman", "run", "--rm", "-i", "--name", name, "--network", "host",
		"--hostname", "ci-container", image,
		"remote", "--registry", reg.URL(), "--environment-id", env, "--registration-bearer-stdin")
	run.Env = podmanEnv(t)
	var runOut lockedBuffer
	run.Stdout, run.Stderr = &runOut, &runOut
	stdin, err := run.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{})
	go func() { _ = run.Wait(); close(ran) }()
	t.Cleanup(func() {
		_, _ = podman(t, context.Background(), "rm", "-f", "--ignore", name)
		stdin.Close()
		select {
		case <-ran:
		case <-time.After(20 * time.Second):
			_ = run.Process.Kill()
			<-ran
		}
		if t.Failed() {
			t.Logf("podman run output:\n%s", runOut.String())
		}
	})
	if _, err := io.WriteString(stdin, token+"\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the executor in the container online", func() bool {
		code, _, err := connectAt(reg.URL(), env, token)
		return err == nil && code == 200
	})
	out, code := runExecCLI(t, "--registry", reg.URL(), "--environment-id", env, "--token-file", tokens, "--",
		"sh", "-c", "cat /etc/executor-image; hostname; id -u; exit 7")
	if want := "executor-prebuilt\nci-container\n65532\n"; out != want || code != 7 {
		t.Errorf("exec in the container: got %q exit %d, want %q exit 7", out, code, want)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
