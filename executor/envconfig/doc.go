// Package envconfig serves environmentConfig/read (spec/capabilities-0.171.0.md §6): it
// discovers and loads the executor-local config and requirements layers exactly as
// codex 0.171.0's codex-config load_local_config_layers does, projects them to the
// requested TOML paths, and re-serializes each surviving layer as the reference's toml
// crate prints it. It is what the codex client reads, with
// configPaths [["mcp_servers"]], to find MCP servers configured on the executor.
//
// # Layers
//
// Above: package executor registers the method (envconfig_methods.go) and advertises
// environmentConfigRead. Below: the host filesystem (plain reads with the executor's
// privileges: the method has no sandbox member, PROBED), executor/protocol (params,
// result, PathURI), internal/oserr (OS error texts), jsonwire (error codes) and
// github.com/pelletier/go-toml/v2. It knows no session, connection or sandbox.
//
// # Contract
//
//   - Params checks in the reference's order: decoding (serde texts through
//     jsonwire.UnmarshalParams: null → "invalid type: null, expected struct
//     EnvironmentConfigReadParams", missing cwd/configPaths/requirementsPaths, the
//     3-element sequence form); both lists empty; an empty path; a cwd URI that names no
//     host path. A cwd that does not exist is fine.
//   - Layers (load.go): system (<SystemDir>/config.toml), user ($CODEX_HOME/config.toml),
//     project (<dir>/.codex/config.toml from the project root down to cwd, trusted only;
//     trust.go; in a linked worktree each layer's [hooks] come from the main
//     checkout's matching .codex/config.toml, as a layer of their own), legacy
//     managed (<SystemDir>/managed_config.toml). Requirements: the system
//     requirements.toml, then those derived from managed_config.toml. Every read loads
//     the files afresh.
//   - Projection and serialization: project.go, encode.go, strings.go, datetime.go.
//   - Errors: -32602 for params; -32603 "failed to load executor-local config: …" for
//     a file that cannot be read or parsed, with the reference's framing
//     ("<path>:<line>:<col>: <msg>" for system/user/managed files; "Error parsing
//     project config file <path>: TOML parse error at line L, column C" plus the
//     snippet for project files, "Error parsing project hooks config file …" for a
//     main checkout's hooks file, "failed to parse requirements layer <path>: …" for
//     requirements.toml; serde's texts for bad legacy-managed values and bad
//     [projects] entries).
//
// # TOML library and where its output is adjusted
//
// github.com/pelletier/go-toml/v2 (v2.4.3, MIT, maintained): its decoder validates a
// document and gives the error position; its unstable AST parser keeps document order,
// which a Go map would lose and which the reference keeps (toml's preserve_order). The
// library's own encoder is not used: the reference's layout and quoting rules are
// implemented here, each checked against the binary:
//
//   - strings and keys choose basic, literal, multi-line basic or multi-line literal
//     quoting as toml_writer does (strings.go), with \uXXXX in upper-case hex;
//   - floats print Rust's shortest decimal without exponent (1e10 → 10000000000.0),
//     nan without sign, -0.0 kept; integers in decimal (0x10 → 16);
//   - datetimes are rebuilt from the raw text (datetime.go), never through time.Time;
//   - tables print pairs first, then sub-tables depth first; implicit tables print no
//     header; arrays whose elements are all tables become [[arrays of tables]]; inline
//     tables in arrays print "{ k = v }";
//   - parse messages: the library's line and column are kept; where they agree with
//     the reference's, the message is reworded to the toml crate's (parse.go,
//     messageTable: 32 probed cases, e.g. "string values must be quoted, expected
//     literal string", "duplicate key", "unclosed array, expected `]`") and the
//     snippet's carets span the value token where the reference's do; integer
//     overflow reads "u64 value was too large" or "invalid type: integer `N` as
//     i128, expected any valid TOML value".
//
// # Limits and known differences
//
// MaxConfigFileBytes (limits.go) bounds each file; the reference has no bound. Parse
// errors not in messageTable keep go-toml's wording, and some positions differ (PROBED):
// a bad escape ("\q": the reference says 1:7 "missing escaped value, expected `b`, …",
// go-toml 1:6), trailing garbage after a value ("a = 1 2"), an unterminated """
// string, an impossible date (the reference points at the value start with "invalid
// date, expected day between 01 and 28"), a [table] redefining a dotted key. Documents
// the two parsers judge differently are not reconciled: the only one found is a leap
// second (":60"), which the reference accepts and go-toml rejects. TOML 1.1 syntax
// (multi-line inline tables, trailing commas in them, "\e", "\xHH", times without
// seconds) is accepted by both and prints identically. macOS MDM layers (READ) are not
// implemented. serde's texts are reproduced for the shapes probed (load.go, trust.go);
// Rust's Debug escaping of odd characters inside them follows Go's strconv.Quote.
//
// Differential check (by hand, 2026-12-05): the 584 inputs of the FuzzParseMarshal
// corpus written as $CODEX_HOME/config.toml and read back with every top-level key
// selected, on 0.171.0 and ours: 218 documents parse on both and give identical
// results, 62 invalid ones give identical errors, 304 invalid ones differ only in the
// error's wording or position; no document was accepted by one side and rejected by
// the other.
//
// # Environment
//
// userHomeDir is $HOME, else the passwd entry's home (a relative one is null).
// codexHomeDir is $CODEX_HOME, which must name a directory and is canonicalized
// ("failed to find Codex home: CODEX_HOME points to \"…\", but that path does not
// exist" otherwise), else <home>/.codex as is. hostname follows codex-config's
// host_name (hostname.go). All PROBED.
//
// # Concurrency
//
// Reader has no mutable state; Read is safe for concurrent use. The package starts no
// goroutines.
package envconfig
