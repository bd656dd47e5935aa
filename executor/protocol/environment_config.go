package protocol

// environmentConfig/read (spec/capabilities-0.171.0.md §6): the executor-local config
// and requirements layers, projected to the requested TOML paths. Advertised by
// Capabilities.EnvironmentConfigRead.

// MethodEnvironmentConfigRead reads executor-local config layers.
const MethodEnvironmentConfigRead = "environmentConfig/read"

// EnvironmentConfigReadParams are the params of environmentConfig/read. All three
// members are required; there is no sandbox member (an unknown "sandbox" key is
// ignored like any other).
type EnvironmentConfigReadParams struct {
	// Cwd selects the project layers; it need not exist. A URI that names no path on
	// this host is rejected after the path checks.
	Cwd PathURI `json:"cwd"`
	// ConfigPaths and RequirementsPaths are TOML key paths; at least one path overall,
	// each with at least one segment.
	ConfigPaths       [][]string `json:"configPaths"`
	RequirementsPaths [][]string `json:"requirementsPaths"`
}

// RustName implements jsonwire.RustNamed.
func (EnvironmentConfigReadParams) RustName() string { return "EnvironmentConfigReadParams" }

// EnvironmentConfigReadResult is the result of environmentConfig/read.
type EnvironmentConfigReadResult struct {
	UserHomeDir  *PathURI                    `json:"userHomeDir"` // nil when unknown
	CodexHomeDir PathURI                     `json:"codexHomeDir"`
	Hostname     *string                     `json:"hostname"` // nil when unknown
	Config       EnvironmentConfigLayerStack `json:"config"`
	Requirements EnvironmentConfigLayerStack `json:"requirements"`
}

// EnvironmentConfigLayerStack is one ordered stack, lowest precedence first.
type EnvironmentConfigLayerStack struct {
	Layers []EnvironmentConfigLayer `json:"layers"` // never nil
	// CloudInsertionIndex is where a client inserts cloud-provided layers: the number
	// of surviving layers that precede that position.
	CloudInsertionIndex int `json:"cloudInsertionIndex"`
}

// EnvironmentConfigLayer is one source: its name, the directory its relative paths
// resolve against, and its projected TOML as the reference prints it.
type EnvironmentConfigLayer struct {
	Source  string  `json:"source"`
	BaseDir PathURI `json:"baseDir"`
	TOML    string  `json:"toml"`
}
