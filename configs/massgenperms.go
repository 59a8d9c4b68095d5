package configs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// BackendPermissions is MassGen 0.1.97's permission engine block, agents[].backend.permissions:
// declarative allow/ask/deny rules over a small action(target) vocabulary, a role preset and
// the approval settings. It is not massgen's permissions: section (top level and
// agents[].permissions), whose rules name tools: Load maps what has a massgen equivalent onto
// the agent's permissions (MapBackendPermissions) and warns about the rest.
type BackendPermissions struct {
	// Enabled false makes MassGen skip the block; massgen then maps nothing.
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// Rules are MassGen's action(target) rules by decision.
	Rules BackendRules `yaml:"rules,omitempty" json:"rules,omitempty"`
	// Role is a preset: read-only and researcher deny writes and commands.
	Role string `yaml:"role,omitempty" json:"role,omitempty"`
	// AutomationDefault, Audit, MaxConsecutiveAuto and PersistApprovals steer MassGen's
	// approvals; massgen has no equivalent (see the key table).
	AutomationDefault  string         `yaml:"automation_default,omitempty" json:"automation_default,omitempty"`
	Audit              *bool          `yaml:"audit,omitempty" json:"audit,omitempty"`
	MaxConsecutiveAuto int            `yaml:"max_consecutive_auto,omitempty" json:"max_consecutive_auto,omitempty"`
	PersistApprovals   *bool          `yaml:"persist_approvals,omitempty" json:"persist_approvals,omitempty"`
	Extra              map[string]any `yaml:",inline" json:"-"`
}

// BackendRules are MassGen's rules by decision ("command(git push --force*)", "write_file(/etc/**)",
// "read_url(*)", "mcp(linear/*)", "*").
type BackendRules struct {
	Allow []string `yaml:"allow,omitempty" json:"allow,omitempty"`
	Ask   []string `yaml:"ask,omitempty" json:"ask,omitempty"`
	Deny  []string `yaml:"deny,omitempty" json:"deny,omitempty"`
}

// The permission engine's tool classes (permissions.ToolClasses) MassGen's command action and
// roles map onto.
const (
	classWrite   = "@write"
	classCommand = "@command"
)

// MassGen's actions are command, mcp, * and read_url, and its file actions read_file and
// write_file. The file actions are the names of built-in tools whose declarations say they are
// MassGen actions: the caller gives them (LoadOptions.Actions, filesystem.MassGenActions), each
// with the engine's class of its tool, which names every tool whose declaration reads (or writes
// or deletes) a path, whatever the tool is called.
const (
	actionCommand = "command"
	actionMCP     = "mcp"
	actionAny     = "*"
	actionReadURL = "read_url"
)

// backendActions lists MassGen's actions as its documentation does, the file actions given
// (word -> class) by name.
func backendActions(actions map[string]string) string {
	words := []string{actionCommand}
	words = append(words, slices.Sorted(maps.Keys(actions))...)
	words = append(words, actionReadURL, actionMCP)
	return strings.Join(words, ", ") + " and " + actionAny
}

// backendRoles are MassGen's role presets massgen maps: each denies every write and command.
var backendRoles = []string{"read-only", "researcher"}

var backendRuleRE = regexp.MustCompile(`^\s*([A-Za-z_*][\w*]*)\s*(?:\((.*)\)\s*)?$`)

// MappedPermissions is what MapBackendPermissions makes of a block: rules for the agent's
// permissions section, and what it could not carry over (each with the key at fault).
type MappedPermissions struct {
	Allow, Deny []string
	NotMapped   []NotMapped
}

// NotMapped is one rule or setting of a backend permissions block massgen does not act on.
type NotMapped struct {
	Key, Why string // Key is relative to the block: "rules.ask[0]", "role"
}

// MapBackendPermissions maps a MassGen permissions block onto massgen's rules:
//   - command(P) becomes @command(P) (a glob over the whole command line in both);
//   - read_file(P) and write_file(P) (the file actions given: word -> class, from
//     filesystem.MassGenActions) become @read(P) and @write(P): every tool that reads (or
//     writes or deletes) a path by its declaration, P matched as
//     massgen matches paths (as given, resolved, or relative to the workspace or the context
//     path; * does not cross a /, ** does), where MassGen matches the argument as written;
//   - mcp(server/tool) becomes mcp__server__tool; * (or *(P)) becomes *(P);
//   - role read-only or researcher denies every file write and every command.
//
// Deny wins in both. read_url rules and unknown actions or roles are not mapped (NotMapped); ask
// rules are not either, which the key table says (rules.ask is an ignored key). A block with
// enabled: false maps to nothing, as MassGen ignores it. Without actions, a file action is
// unknown.
func MapBackendPermissions(p *BackendPermissions, actions map[string]string) MappedPermissions {
	var m MappedPermissions
	if p == nil || (p.Enabled != nil && !*p.Enabled) {
		return m
	}
	for _, d := range []struct {
		name  string
		rules []string
		out   *[]string
	}{{"allow", p.Rules.Allow, &m.Allow}, {"deny", p.Rules.Deny, &m.Deny}} {
		for i, r := range d.rules {
			key := fmt.Sprintf("rules.%s[%d]", d.name, i)
			rs, why := mapBackendRule(r, actions)
			if why != "" {
				m.NotMapped = append(m.NotMapped, NotMapped{key, why})
			}
			*d.out = append(*d.out, rs...)
		}
	}
	switch {
	case p.Role == "":
	case slices.Contains(backendRoles, p.Role):
		m.Deny = append(m.Deny, classWrite, classCommand)
	default:
		m.NotMapped = append(m.NotMapped, NotMapped{"role", fmt.Sprintf("role %q is not mapped (massgen maps %s: deny every file write and command)", p.Role, strings.Join(backendRoles, " and "))})
	}
	return m
}

// mapBackendRule maps one MassGen rule; why says what was left out.
func mapBackendRule(rule string, actions map[string]string) ([]string, string) {
	sm := backendRuleRE.FindStringSubmatch(rule)
	if sm == nil {
		return nil, fmt.Sprintf("%q is not a rule (action or action(target))", rule)
	}
	action, target := sm[1], sm[2]
	if sm[0] != "" && !strings.Contains(rule, "(") {
		target = "*"
	}
	switch action {
	case actionCommand:
		return []string{classCommand + "(" + target + ")"}, ""
	case actionMCP:
		return []string{"mcp__" + strings.ReplaceAll(target, "/", "__")}, ""
	case actionAny:
		return []string{"*(" + target + ")"}, ""
	case actionReadURL:
		return nil, fmt.Sprintf("%q is not mapped: massgen has no rule over URLs (a command's network is command_network's, MCP tools are named by mcp__server__tool rules)", rule)
	}
	if c, ok := actions[action]; ok {
		return []string{c + "(" + target + ")"}, ""
	}
	return nil, fmt.Sprintf("%q: unknown action %s (MassGen's are %s)", rule, action, backendActions(actions))
}

// mapBackendPermissions adds each agent's mapped backend permissions to its permissions
// section and warns about what was not mapped.
func (c *Config) mapBackendPermissions(d *document, actions map[string]string, warn func(key string, line int, msg string)) {
	for i := range c.Agents {
		a := &c.Agents[i]
		p := a.Backend.Permissions
		if p == nil {
			continue
		}
		base := fmt.Sprintf("agents[%d].backend.permissions", i)
		m := MapBackendPermissions(p, actions)
		for _, n := range m.NotMapped {
			key := base + "." + n.Key
			warn(key, d.lineOf(key), key+": "+n.Why)
		}
		if len(m.Allow)+len(m.Deny) == 0 {
			continue
		}
		if a.Permissions == nil {
			a.Permissions = &Permissions{}
		}
		a.Permissions.Allow = append(a.Permissions.Allow, m.Allow...)
		a.Permissions.Deny = append(a.Permissions.Deny, m.Deny...)
		if c.mappedPerms == nil {
			c.mappedPerms = map[int]bool{}
		}
		c.mappedPerms[i] = true
	}
}
