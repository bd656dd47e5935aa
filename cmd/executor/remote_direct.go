package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/registry/direct"
)

// remoteDirectFlags are `executor remote`'s direct-transport flags (docs/direct-transport.md),
// each with an EXECUTOR_* environment twin.
type remoteDirectFlags struct {
	fs                       *flag.FlagSet
	transport                *string
	sigv4                    *bool
	profile, region, service *string
}

func directFlags(fs *flag.FlagSet) *remoteDirectFlags {
	return &remoteDirectFlags{
		fs:        fs,
		transport: fs.String("remote-transport", envOr("EXECUTOR_REMOTE_TRANSPORT", remote.TransportNoise), "transport to the registry: noise (relay + Noise) or direct (SigV4-signed WebSocket, plain JSON-RPC; needs --aws-sigv4) [EXECUTOR_REMOTE_TRANSPORT]"),
		sigv4:     fs.Bool("aws-sigv4", envBool("EXECUTOR_AWS_SIGV4"), "sign the direct registration and WebSocket handshake with AWS SigV4 [EXECUTOR_AWS_SIGV4]"),
		profile:   fs.String("aws-profile", os.Getenv("EXECUTOR_AWS_PROFILE"), "AWS profile for SigV4 credentials and region (default: AWS_PROFILE, then the SDK chain) [EXECUTOR_AWS_PROFILE]"),
		region:    fs.String("aws-region", os.Getenv("EXECUTOR_AWS_REGION"), "AWS signing region (default: the SDK region chain) [EXECUTOR_AWS_REGION]"),
		service:   fs.String("aws-service", envOr("EXECUTOR_AWS_SERVICE", direct.DefaultService), "AWS signing service [EXECUTOR_AWS_SERVICE]"),
	}
}

// check applies the reference's rules (PROBED on 0.171.0): --remote-transport is noise or
// direct; direct requires --aws-sigv4; --aws-profile/--aws-region/--aws-service require
// --aws-sigv4; --aws-sigv4 conflicts with every registry credential mode (usage errors,
// exit 2); --aws-sigv4 with the noise transport and an empty --aws-service are runtime
// errors (exit 1), as in the reference.
func (d *remoteDirectFlags) check(credModes map[string]bool) (string, remote.AWSConfig, error) {
	var none remote.AWSConfig
	t := *d.transport
	if t != remote.TransportNoise && t != remote.TransportDirect {
		return "", none, fmt.Errorf("%w: invalid value %q for '--remote-transport' [possible values: noise, direct]", errUsage, t)
	}
	if !*d.sigv4 {
		for _, name := range []string{"aws-profile", "aws-region", "aws-service"} {
			if d.set(name) {
				return "", none, fmt.Errorf("%w: --%s requires --aws-sigv4", errUsage, name)
			}
		}
		if t == remote.TransportDirect {
			return "", none, fmt.Errorf("%w: %w", errUsage, remote.ErrDirectNeedsSigV4)
		}
		return t, none, nil
	}
	for _, name := range []string{"registration-bearer-stdin", "executor-credential-stdin", "chatgpt-token-stdin", "use-agent-identity-auth"} {
		if credModes[name] {
			return "", none, fmt.Errorf("%w: the argument '--aws-sigv4' cannot be used with '--%s'", errUsage, name)
		}
	}
	if t != remote.TransportDirect {
		return "", none, errors.New("--aws-sigv4 requires --remote-transport direct")
	}
	if strings.TrimSpace(*d.service) == "" {
		return "", none, errors.New("AWS service name must not be empty")
	}
	return t, remote.AWSConfig{SigV4: true, Profile: *d.profile, Region: *d.region, Service: *d.service}, nil
}

// set reports whether the flag was given on the command line or by its environment twin.
func (d *remoteDirectFlags) set(name string) bool {
	given := false
	d.fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	if given {
		return true
	}
	env := map[string]string{"aws-profile": "EXECUTOR_AWS_PROFILE", "aws-region": "EXECUTOR_AWS_REGION", "aws-service": "EXECUTOR_AWS_SERVICE"}[name]
	return os.Getenv(env) != ""
}
