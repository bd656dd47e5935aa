package credmask

// The environment transform of a launch (§9.1, §9.2).

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// ShellStartupMaskable reports whether argv is a launch whose environment may be
// masked: exactly [bash, -c, SCRIPT] with bash named "bash" or "/usr/bin/bash" (§9.1).
// sh -c, bash -lc, bash -i -c, extra arguments after SCRIPT and direct programs are not.
func ShellStartupMaskable(argv []string) bool {
	return len(argv) == 3 && (argv[0] == "bash" || argv[0] == "/usr/bin/bash") && argv[1] == "-c"
}

// Config is what Prepare needs besides the launch. It is never mutated.
type Config struct {
	// Masking is proxy.credentialMasking.
	Masking bool
	// Providers are the decoded credentialProviders (DecodeProviders), nil for none.
	Providers Providers
	// CABundlePath is the trust bundle (CA.TrustBundle); written into CAEnvVars when
	// Masking is on. Empty leaves those variables alone.
	CABundlePath string
	// Logger receives the provider warnings and the unavailable-startup line; nil
	// discards. Secrets are never logged.
	Logger *slog.Logger
	// Rand seeds dummy generation; nil uses crypto/rand. Tests set it for determinism.
	Rand *mrand.Rand
}

// Prepared is the result of Prepare.
type Prepared struct {
	// Env is the child's environment (a new map; the input is not modified).
	Env map[string]string
	// Broker translates dummies back for authorized requests; nil when nothing was
	// masked (masking off, another shell startup, or no credential in env).
	Broker *Broker
}

// Prepare applies credential masking to a launch's environment (after the proxy
// variables of §4 were written). With Masking off it returns env unchanged. With it
// on: the CA variables point at CABundlePath for every launch; for a maskable shell
// startup (ShellStartupMaskable) every brokered credential and every alias of one is
// replaced by its dummy and the two marker variables are set; for any other startup
// the credentials stay real and UnavailableLogText is logged at info.
func Prepare(argv []string, env map[string]string, cfg *Config) (*Prepared, error) {
	out := make(map[string]string, len(env)+len(CAEnvVars)+2)
	for k, v := range env {
		out[k] = v
	}
	if cfg == nil || !cfg.Masking {
		return &Prepared{Env: out}, nil
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.CABundlePath != "" {
		for _, k := range CAEnvVars {
			out[k] = cfg.CABundlePath
		}
	}
	if !ShellStartupMaskable(argv) {
		log.Info(UnavailableLogText)
		return &Prepared{Env: out}, nil
	}
	r := cfg.Rand
	if r == nil {
		var seed [32]byte
		_, _ = rand.Read(seed[:]) // never fails (crypto/rand contract)
		r = mrand.New(mrand.NewChaCha8(seed))
	}
	providers := builtinProviders(env)
	unprotected := false
	for _, p := range compileProviders(cfg.Providers, log) {
		if b := p.bind(env, log, &unprotected); b != nil {
			providers = append(providers, b)
		}
	}
	b := &Broker{}
	marker := map[string]string{}
	for _, p := range providers {
		for _, k := range p.env {
			real := strings.TrimSpace(env[k])
			if !p.accepts(real) {
				continue
			}
			c := b.find(p, real)
			if c == nil {
				if b.isDummy(real) {
					continue
				}
				d, err := p.dummyFor(real, r)
				if err != nil {
					log.Warn("leaving a credential unmasked: no dummy could be generated", "provider", p.id, "variable", k)
					continue
				}
				c = &credential{provider: p, real: NewSecret(real), dummy: d}
				b.creds = append(b.creds, c)
			}
			out[k] = c.dummy
			marker[k] = c.dummy
			marker[aliasPrefix+k] = c.dummy
		}
	}
	if unprotected {
		log.Warn(unprotectedLogText)
	}
	if len(b.creds) == 0 {
		out[EnvBrokerActive] = "1"
		out[EnvBrokeredCredentials] = "[]"
		return &Prepared{Env: out}, nil
	}
	if b.maskAliases(env, out, marker) && !unprotected {
		log.Warn(unprotectedLogText)
	}
	enc, err := encodeMarker(marker)
	if err != nil {
		return nil, err
	}
	out[EnvBrokerActive] = "1"
	out[EnvBrokeredCredentials] = enc
	return &Prepared{Env: out, Broker: b}, nil
}

// encodeMarker renders the [name, dummy] pairs sorted by name (probed order: every
// "@alias:" entry first, then the canonical ones, each by byte order).
func encodeMarker(m map[string]string) (string, error) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	pairs := make([][2]string, len(names))
	for i, k := range names {
		pairs[i] = [2]string{k, m[k]}
	}
	b, err := json.Marshal(pairs)
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", EnvBrokeredCredentials, err)
	}
	return string(b), nil
}

// randFromSeed is a deterministic generator for tests and fuzzing.
func randFromSeed(seed uint64) *mrand.Rand {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	return mrand.New(mrand.NewChaCha8(s))
}

// maskAliases masks every other variable whose value is exactly a brokered real value
// (0.171.0: "v" is an alias of GITHUB_TOKEN=" v ", " v " is not). It reports whether
// some other value merely contains a real value (a URL with the token inside, the
// value with spaces): those stay real, as in the reference, which then logs
// unprotectedLogText.
func (b *Broker) maskAliases(env, out, marker map[string]string) (unprotected bool) {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, done := marker[aliasPrefix+k]; done {
			continue
		}
		v := env[k]
		for _, c := range b.creds {
			real := c.real.Reveal()
			if v == real {
				out[k] = c.dummy
				marker[aliasPrefix+k] = c.dummy
				break
			}
			if len(real) >= minEmbeddedLen && strings.Contains(v, real) {
				unprotected = true
			}
		}
	}
	return unprotected
}
