package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/execlab/executor/internal/wsauth"
)

// errWSAuthWithRemote is the reference's refusal of --ws-* flags in remote mode.
var errWSAuthWithRemote = errors.New("WebSocket listener auth cannot be used with --remote or forward")

// optString is a string flag that remembers whether it was given (even as "").
type optString struct{ v *string }

func (o *optString) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return *o.v
}
func (o *optString) Set(s string) error { o.v = &s; return nil }

// optPath is optString refusing an empty value, as the reference's path flags do.
type optPath struct{ optString }

func (o *optPath) Set(s string) error {
	if s == "" {
		return errors.New("a value is required")
	}
	return o.optString.Set(s)
}

type optMode struct{ v *wsauth.Mode }

func (o *optMode) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return o.v.String()
}
func (o *optMode) Set(s string) error {
	m, err := wsauth.ParseMode(s)
	if err != nil {
		return errors.New("possible values: capability-token, signed-bearer-token")
	}
	o.v = &m
	return nil
}

type optUint struct{ v *uint64 }

func (o *optUint) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatUint(*o.v, 10)
}
func (o *optUint) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a whole number of seconds: %w", err)
	}
	o.v = &n
	return nil
}

// wsAuthFlags registers the reference's --ws-* flags on fs and returns a function giving
// their values after fs.Parse.
func wsAuthFlags(fs *flag.FlagSet) func() wsauth.Flags {
	var (
		mode                  optMode
		tokenFile, secretFile optPath
		tokenSHA, iss, aud    optString
		skew                  optUint
	)
	fs.Var(&mode, "ws-auth", "authenticate WebSocket upgrades: capability-token or signed-bearer-token (default: none; see README, Security model)")
	fs.Var(&tokenFile, "ws-token-file", "capability-token: file holding the token (trimmed); relative paths resolve against the working directory")
	fs.Var(&tokenSHA, "ws-token-sha256", "capability-token: hex SHA-256 of the token, instead of --ws-token-file (the host then holds no token)")
	fs.Var(&secretFile, "ws-shared-secret-file", "signed-bearer-token: file holding the HS256 secret (trimmed, at least 32 bytes)")
	fs.Var(&iss, "ws-issuer", "signed-bearer-token: required iss claim")
	fs.Var(&aud, "ws-audience", "signed-bearer-token: required aud claim (a string or one element of an array)")
	fs.Var(&skew, "ws-max-clock-skew-seconds", "signed-bearer-token: tolerance on exp and nbf, in seconds (default 30)")
	return func() wsauth.Flags {
		return wsauth.Flags{Mode: mode.v, TokenFile: tokenFile.v, TokenSHA256: tokenSHA.v,
			SharedSecretFile: secretFile.v, Issuer: iss.v, Audience: aud.v, MaxClockSkewSeconds: skew.v}
	}
}
