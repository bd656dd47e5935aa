package capdiscover

// YAML access for front matter and agents/openai.yaml, with serde_yaml's rules as
// observed from codex 0.171.0: one document; struct fields match keys by their text;
// a known field given twice is an error, unknown keys (repeated or not) are ignored;
// a string field takes any scalar as its text and null (~, null, empty) as absent; a
// bool takes only true/True/TRUE/false/False/FALSE unquoted. The parser is
// go.yaml.in/yaml/v3 (the maintained successor of gopkg.in/yaml.v3), used at the node
// level so that these rules, not its own decoding rules, apply.

import (
	"errors"
	"io"
	"iter"
	"strings"

	"go.yaml.in/yaml/v3"
)

var errYAMLDocuments = errors.New("capdiscover: YAML holds more than one document")

// yamlDocument parses src as exactly one YAML document and returns its root node (an
// empty document is a null scalar).
func yamlDocument(src string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}, nil
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errYAMLDocuments
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}, nil
	}
	return deref(doc.Content[0]), nil
}

// deref follows aliases to the anchored node.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxAliasHops; i++ {
		n = n.Alias
	}
	return n
}

// maxAliasHops bounds alias chains (yaml.v3 refuses cycles already; this is a backstop).
const maxAliasHops = 64

// mappingPairs yields a mapping's scalar keys and their (dereferenced) values in document
// order; pairs whose key is not a scalar are skipped.
func mappingPairs(m *yaml.Node) iter.Seq2[string, *yaml.Node] {
	return func(yield func(string, *yaml.Node) bool) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := deref(m.Content[i])
			if k.Kind != yaml.ScalarNode {
				continue
			}
			if !yield(k.Value, deref(m.Content[i+1])) {
				return
			}
		}
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// optionalString is a string field: nil for null, the text of any other scalar, an
// error for a sequence or mapping.
func optionalString(n *yaml.Node) (*string, error) {
	if n.Kind != yaml.ScalarNode {
		return nil, errFrontMatterType
	}
	if isNull(n) {
		return nil, nil
	}
	s := n.Value
	return &s, nil
}

// optionalBool is a bool field: nil for null; only serde_yaml's six spellings, unquoted.
func optionalBool(n *yaml.Node) (*bool, error) {
	if n.Kind != yaml.ScalarNode {
		return nil, errFrontMatterType
	}
	if isNull(n) {
		return nil, nil
	}
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		switch n.Value {
		case "true", "True", "TRUE":
			t := true
			return &t, nil
		case "false", "False", "FALSE":
			f := false
			return &f, nil
		}
	}
	return nil, errFrontMatterType
}

// structFields walks a mapping decoded as a struct with the given known fields: fn is
// called once per known key; a repeated known key is errDuplicateField; a node that is
// not a mapping is errFrontMatterType.
func structFields(n *yaml.Node, known []string, fn func(key string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return errFrontMatterType
	}
	seen := make(map[string]bool, len(known))
	for k, v := range mappingPairs(n) {
		if !contains(known, k) {
			continue
		}
		if seen[k] {
			return errDuplicateField
		}
		seen[k] = true
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
