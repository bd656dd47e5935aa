package capdiscover

// agents/openai.yaml, the skill's sidecar (spec/capabilities-0.171.0.md §5; rules observed
// from codex 0.171.0 and 0.169.0):
//
//	policy:                          optional mapping (null: absent)
//	  allow_implicit_invocation: bool  optional
//	  products: [codex|chatgpt|atlas]  optional sequence (null refused); each also in
//	                                   upper case (CODEX), returned in lower case
//	dependencies:                    optional mapping (null: absent)
//	  tools:                         optional sequence of mappings (null refused)
//	    - type: …                    required; blank or missing drops this tool
//	      value: …                   required; blank or missing drops this tool
//	      description|transport|command|url: …   optional; blank → null
//	interface:                       optional mapping of optional strings (display_name,
//	                                 short_description, icon_small, icon_large,
//	                                 brand_color, default_prompt); checked, not returned
//
// The file fails open: any type error anywhere (a quoted bool, an unknown product, a
// repeated known key, invalid YAML) makes both policy and dependencies null, and the
// skill is still returned, without a warning. dependencies is null when no tool
// survives. Strings are collapsed to single-spaced lines; type and transport may have at
// most MaxSkillNameChars characters, the others MaxSidecarTextChars.

import (
	"go.yaml.in/yaml/v3"

	"github.com/execlab/executor/executor/protocol"
)

// parseSidecar parses an openai.yaml's contents; nil members on any error.
func parseSidecar(contents string) (*protocol.SkillPolicy, *protocol.SkillDependencies) {
	root, err := yamlDocument(contents)
	if err != nil {
		return nil, nil
	}
	var (
		pol  *protocol.SkillPolicy
		deps *protocol.SkillDependencies
	)
	err = structFields(root, []string{"policy", "dependencies", "interface"}, func(k string, v *yaml.Node) (err error) {
		if isNull(v) {
			return nil
		}
		switch k {
		case "policy":
			pol, err = sidecarPolicy(v)
		case "dependencies":
			deps, err = sidecarDependencies(v)
		default:
			err = structFields(v, sidecarInterfaceFields, func(_ string, iv *yaml.Node) error {
				_, err := optionalString(iv)
				return err
			})
		}
		return err
	})
	if err != nil {
		return nil, nil
	}
	return pol, deps
}

var sidecarInterfaceFields = []string{"display_name", "short_description", "icon_small", "icon_large", "brand_color", "default_prompt"}

func sidecarPolicy(v *yaml.Node) (*protocol.SkillPolicy, error) {
	p := &protocol.SkillPolicy{Products: []string{}}
	err := structFields(v, []string{"allow_implicit_invocation", "products"}, func(k string, fv *yaml.Node) (err error) {
		if k == "allow_implicit_invocation" {
			p.AllowImplicitInvocation, err = optionalBool(fv)
			return err
		}
		if fv.Kind != yaml.SequenceNode {
			return errFrontMatterType
		}
		for _, item := range fv.Content {
			item = deref(item)
			prod, ok := product(item)
			if !ok {
				return errFrontMatterType
			}
			p.Products = append(p.Products, prod)
		}
		return nil
	})
	return p, err
}

// product decodes one products entry: a scalar naming a known product.
func product(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	switch n.Value {
	case "codex", "CODEX":
		return "codex", true
	case "chatgpt", "CHATGPT":
		return "chatgpt", true
	case "atlas", "ATLAS":
		return "atlas", true
	}
	return "", false
}

var sidecarToolFields = []string{"type", "value", "description", "transport", "command", "url"}

func sidecarDependencies(v *yaml.Node) (*protocol.SkillDependencies, error) {
	var tools []protocol.SkillToolDependency
	err := structFields(v, []string{"tools"}, func(_ string, tv *yaml.Node) error {
		if tv.Kind != yaml.SequenceNode {
			return errFrontMatterType
		}
		for _, item := range tv.Content {
			raw := map[string]*string{}
			err := structFields(deref(item), sidecarToolFields, func(k string, fv *yaml.Node) (err error) {
				raw[k], err = optionalString(fv)
				return err
			})
			if err != nil {
				return err
			}
			if t, ok := resolveTool(raw); ok {
				tools = append(tools, t)
			}
		}
		return nil
	})
	if err != nil || len(tools) == 0 {
		return nil, err
	}
	return &protocol.SkillDependencies{Tools: tools}, nil
}

// resolveTool keeps a tool whose type and value are present and within their limits.
func resolveTool(raw map[string]*string) (protocol.SkillToolDependency, bool) {
	typ := boundedText(raw["type"], MaxSkillNameChars)
	value := boundedText(raw["value"], MaxSidecarTextChars)
	if typ == nil || value == nil {
		return protocol.SkillToolDependency{}, false
	}
	return protocol.SkillToolDependency{
		Type:        *typ,
		Value:       *value,
		Description: boundedText(raw["description"], MaxSidecarTextChars),
		Transport:   boundedText(raw["transport"], MaxSkillNameChars),
		Command:     boundedText(raw["command"], MaxSidecarTextChars),
		URL:         boundedText(raw["url"], MaxSidecarTextChars),
	}, true
}

// boundedText collapses s to one line; nil when absent, blank or longer than max
// characters.
func boundedText(s *string, max int) *string {
	if s == nil {
		return nil
	}
	t := singleLine(*s)
	if t == "" || runeCount(t) > max {
		return nil
	}
	return &t
}
