package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/execlab/executor/internal/wsauth"
)

// targetFlags are how `exec` and `tunnel` reach an executor: an environment through a
// registry (--registry, --environment-id, --token-file), or a local `executor serve`
// (--url, with --auth-bearer-token-file for an authenticated listener).
type targetFlags struct {
	registry, envID, tokenFile, url, authTokenFile *string
}

// addTargetFlags defines the target flags on fs; envHelp and authHelp are the commands'
// own help texts for --environment-id and --auth-bearer-token-file.
func addTargetFlags(fs *flag.FlagSet, envHelp, authHelp string) targetFlags {
	return targetFlags{
		registry:      fs.String("registry", os.Getenv("EXECUTOR_REGISTRY_URL"), "registry base URL [EXECUTOR_REGISTRY_URL]"),
		envID:         fs.String("environment-id", os.Getenv("EXECUTOR_ENVIRONMENT_ID"), envHelp),
		tokenFile:     fs.String("token-file", os.Getenv("EXECUTOR_TOKEN_FILE"), "file whose first token line is the bearer for the registry [EXECUTOR_TOKEN_FILE]"),
		url:           fs.String("url", os.Getenv("EXECUTOR_URL"), "ws:// URL of a local 'executor serve' instead of a registry [EXECUTOR_URL]"),
		authTokenFile: fs.String("auth-bearer-token-file", os.Getenv("EXECUTOR_AUTH_BEARER_TOKEN_FILE"), authHelp),
	}
}

// target is the executor the flags chose: url (and authBearerToken) for a local one, or
// registry, environmentID and token.
type target struct {
	url, authBearerToken           string
	registry, environmentID, token string
}

// resolve picks the target (--url wins) and reads its token file; neither complete is a
// usage error.
func (f targetFlags) resolve() (target, error) {
	switch {
	case *f.url != "":
		t := target{url: *f.url}
		if *f.authTokenFile != "" {
			tok, err := wsauth.ReadSecretFile(*f.authTokenFile)
			if err != nil {
				return target{}, err
			}
			t.authBearerToken = tok
		}
		return t, nil
	case *f.registry != "" && *f.envID != "" && *f.tokenFile != "":
		tok, err := readToken(*f.tokenFile)
		if err != nil {
			return target{}, err
		}
		return target{registry: *f.registry, environmentID: *f.envID, token: tok}, nil
	default:
		return target{}, fmt.Errorf("%w: give --url, or --registry, --environment-id and --token-file", errUsage)
	}
}

// readToken returns the first token of a token file (the first field of the first line
// that is neither blank nor a comment).
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading token file: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") && !strings.HasPrefix(f[0], "sha256:") {
			return f[0], nil
		}
	}
	return "", errors.New("token file holds no token")
}
