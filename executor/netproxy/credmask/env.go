package credmask

// The environment transform of a launch (§9.1, §9.2).

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	mrand "math/rand/v2"
	"path"
	"slices"
	"strings"
)

// ShellStartupMaskable reports whether argv is a launch whose environment may be
// masked: exactly [bash, -c, SCRIPT] where bash is any path whose last element is
// "bash" (§9.1; probed on 0.171.0: bash, /bin/bash, /usr/bin/bash, a symlink named bash;
// not a symlink to bash under another name, rbash, sh, dash or zsh). sh -c, bash -lc,
// bash -i -c, extra arguments after SCRIPT and direct programs are not.
func ShellStartupMaskable(argv []string) bool {
	return len(argv) == 3 && path.Base(argv[0]) == "bash" && argv[1] == "-c"
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
	// AllowLocalBinding is proxy.allowLocalBinding: the child may reach loopback
	// directly, so a custom provider's loopback destinations cannot be brokered and a
	// provider left without destinations keeps its credential real (probed 0.171.0,
	// logged as unprotectedLogText).
	AllowLocalBinding bool
	// Registry is the session's credential registry (registry.go); nil starts an
	// empty one for this launch only.
	Registry *Registry
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
	return maskLaunch(env, out, cfg, log)
}

// maskLaunch masks a maskable launch's environment out (a copy of env) against the
// session's registry and sets the two marker variables.
func maskLaunch(env, out map[string]string, cfg *Config, log *slog.Logger) (*Prepared, error) {
	builtins := builtinProviders(env)
	providers := slices.Clone(builtins)
	unprotected := false
	var customs []*provider
	for _, p := range compileProviders(cfg.Providers, log) {
		if b := p.bind(env, cfg.AllowLocalBinding, log, &unprotected); b != nil {
			providers = append(providers, b)
			customs = append(customs, b)
		}
	}
	reg := cfg.Registry
	if reg == nil {
		reg = &Registry{}
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	sc := &scanner{b: reg.snapshotLocked(), r: launchRand(cfg), marker: &reg.pairs, customs: customs,
		reserved: reservedValues(builtins, env), active: map[string]bool{},
		failedGen: func(p *provider) {
			log.Warn("leaving a credential unmasked: no dummy could be generated", "provider", p.id)
		},
		// A stray GitHub token belongs to the enterprise source when GH_HOST activates
		// it (probed: listed as GH_ENTERPRISE_TOKEN), else to the cloud one (GH_TOKEN).
		builtins: []*provider{builtins[len(builtins)-2], builtins[len(builtins)-1]}, shapes: []tokenShape{githubShape, openAIShape}}
	for _, p := range providers {
		sc.active[p.key] = true
	}
	canonical := sc.registerCanonical(providers, env, out)
	sc.scanAll(slices.DeleteFunc(slices.Sorted(maps.Keys(out)), func(k string) bool { return canonical[k] }), out)
	if unprotected || sc.unprotected || len(sc.reserved) > 0 {
		log.Warn(unprotectedLogText)
	}
	reg.creds = sc.b.creds
	out[EnvBrokerActive] = "1"
	enc, err := encodeMarker(usedPairs(reg.pairs.pairs, out))
	if err != nil {
		return nil, err
	}
	out[EnvBrokeredCredentials] = enc
	// The launch's proxy swaps back the session's credentials of the providers active
	// in this launch (probed: a custom dummy of an earlier launch is swapped by a later
	// launch with the same provider, not by one without it).
	b := &Broker{creds: slices.DeleteFunc(slices.Clone(reg.creds), func(c *credential) bool { return !sc.active[c.provider.key] })}
	if len(b.creds) == 0 {
		return &Prepared{Env: out}, nil
	}
	return &Prepared{Env: out, Broker: b}, nil
}

// launchRand is cfg.Rand, or a generator seeded from crypto/rand.
func launchRand(cfg *Config) *mrand.Rand {
	if cfg.Rand != nil {
		return cfg.Rand
	}
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // never fails (crypto/rand contract)
	return mrand.New(mrand.NewChaCha8(seed))
}

// reservedValues are the values of the inactive enterprise source (no enterprise
// GH_HOST among builtins): never registered as strays.
func reservedValues(builtins []*provider, env map[string]string) map[string]bool {
	reserved := map[string]bool{}
	if len(builtins) < 3 {
		for _, k := range githubEnterpriseEnv {
			if v := strings.TrimSpace(env[k]); v != "" {
				reserved[v] = true
			}
		}
	}
	return reserved
}

// encodeMarker renders the [name, dummy] pairs sorted by name, then dummy (probed
// order: every "@alias:" entry first, then the canonical ones, each by byte order; a
// name appears once per dummy).
func encodeMarker(pairs [][2]string) (string, error) {
	if len(pairs) == 0 {
		return "[]", nil
	}
	sorted := slices.Clone(pairs)
	slices.SortFunc(sorted, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	b, err := json.Marshal(sorted)
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
