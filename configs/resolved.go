package configs

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"
)

// ResolvedYAML is the effective config as YAML (`configs show --resolved`): agent: turned into
// agents:, ${VAR} expanded, every path absolute, defaults filled in, API keys and MCP server env
// values masked. A key massgen does not act on carries a comment saying so on its line
// ("# ignored: ..."), as does a backend type that cannot run, so nothing printed reads as if it
// were in effect when it is not.
func (c *Config) ResolvedYAML() ([]byte, error) {
	var root yaml.Node
	if err := root.Encode(c.Redacted()); err != nil {
		return nil, fmt.Errorf("configs: encoding the resolved config: %w", err)
	}
	checkKeys(&root, nil, func(f keyFinding) {
		switch f.status {
		case Ignored, Refused:
			f.key.LineComment = f.detail
		default:
			f.key.LineComment = "unknown key: not used"
			if f.suggestion != "" {
				f.key.LineComment += fmt.Sprintf(" (did you mean %s?)", f.suggestion)
			}
		}
	})
	markBackendTypes(&root)
	c.markSharedWorkspaces(&root)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, fmt.Errorf("configs: encoding the resolved config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// markBackendTypes comments each backend type that cannot run.
func markBackendTypes(root *yaml.Node) {
	_, agents := mapGet(root, "agents")
	if agents == nil {
		return
	}
	for _, a := range agents.Content {
		_, b := mapGet(a, "backend")
		k, v := mapGet(b, "type")
		if k == nil {
			continue
		}
		if bt, ok := LookupBackendType(v.Value); ok && bt.Status == Refused {
			k.LineComment = "refused: " + bt.Reason()
		}
	}
}

// markSharedWorkspaces comments each workspace split from a folder several agents name, and each
// permissions section that holds rules mapped from MassGen's backend.permissions.
func (c *Config) markSharedWorkspaces(root *yaml.Node) {
	_, agents := mapGet(root, "agents")
	if agents == nil {
		return
	}
	for i, a := range agents.Content {
		if c.mappedPerms[i] {
			if k, _ := mapGet(a, "permissions"); k != nil {
				k.LineComment = "includes the rules mapped from backend.permissions (MassGen 0.1.97)"
			}
		}
		note := c.sharedCWD[i]
		if note == "" {
			continue
		}
		_, b := mapGet(a, "backend")
		if k, _ := mapGet(b, "cwd"); k != nil {
			k.LineComment = note
		}
	}
}
