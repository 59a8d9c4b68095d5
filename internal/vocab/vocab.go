// Package vocab declares, once, every closed vocabulary a config value takes: the permission
// mode, a context path's access, the strictness levels, the command sandbox and network modes,
// the MCP transports and security levels, the scripted backend's phases and the displays. Each
// is a string type whose Values() lists its words; it decodes itself (encoding.TextUnmarshaler),
// so YAML and JSON decoding into the config refuse a word outside the list, and every message,
// doc table and key-table note is checked against that one list (configs' TestVocabularies).
//
// The owners name these types under their own name (permissions.Mode, sandbox.Mode,
// display.Mode, ...: type aliases), so the engine, the sandbox and the orchestrator need not
// import configs, and configs need not import them: internal/sandbox links Landlock's psx and
// mvdan.cc/sh comes with the permission engine, which every importer of configs would carry, and
// display and orchestrator import configs themselves. This package imports the standard library
// only.
package vocab

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// word is what each vocabulary type is: a string type listing its words.
type word[T any] interface {
	~string
	Values() []T
	noun() string
}

// UnknownError is a word outside its vocabulary.
type UnknownError struct {
	Noun  string   // what the word names: "mode", "sandbox", "permission", ...
	Value string   // as given
	Known []string // the vocabulary, in its order
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown %s %q (known: %s)", e.Noun, e.Value, strings.Join(e.Known, ", "))
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// Words lists T's words, in order.
func Words[T word[T]]() []string {
	var z T
	return strs(z.Values())
}

// parse accepts s when it is one of T's words or empty (unset: the owner's default).
func parse[T word[T]](s string) (T, error) {
	v := T(s)
	if s == "" || slices.Contains(v.Values(), v) {
		return v, nil
	}
	return "", &UnknownError{Noun: v.noun(), Value: s, Known: strs(v.Values())}
}

// set is UnmarshalText for every vocabulary: *out is only changed when text is a word.
func set[T word[T]](out *T, text []byte) error {
	v, err := parse[T](string(text))
	if err != nil {
		return err
	}
	*out = v
	return nil
}

// Vocabulary describes one vocabulary for messages, docs and tests.
type Vocabulary struct {
	Type   reflect.Type // the Go type (configs' fields of this type take it)
	Noun   string       // in messages: unknown <Noun> "x" (known: ...)
	Values []string
}

func describe[T word[T]]() Vocabulary {
	var z T
	return Vocabulary{Type: reflect.TypeFor[T](), Noun: z.noun(), Values: Words[T]()}
}

// All lists every vocabulary.
func All() []Vocabulary {
	return []Vocabulary{
		describe[PermissionMode](), describe[Access](), describe[Strictness](), describe[VotingSensitivity](),
		describe[SandboxMode](), describe[NetworkMode](), describe[MCPTransport](), describe[SecurityLevel](),
		describe[EnvMode](), describe[Phase](), describe[Display](),
	}
}

// PermissionMode is the permission mode (permissions.mode): who is asked before what.
type PermissionMode string

const (
	// PermissionAcceptEdits (the default): the path rules decide, nobody is asked.
	PermissionAcceptEdits PermissionMode = "acceptEdits"
	// PermissionDefault also asks before final writes to context paths and unlisted commands.
	PermissionDefault PermissionMode = "default"
	// PermissionBypass skips asks and allow/deny rules (never the path rules).
	PermissionBypass PermissionMode = "bypassPermissions"
)

func (PermissionMode) Values() []PermissionMode {
	return []PermissionMode{PermissionAcceptEdits, PermissionDefault, PermissionBypass}
}
func (PermissionMode) noun() string                       { return "mode" }
func (m *PermissionMode) UnmarshalText(text []byte) error { return set(m, text) }

// Check says whether m is a word ("" is unset: acceptEdits).
func (m PermissionMode) Check() error {
	_, err := parse[PermissionMode](string(m))
	return err
}

// Access is a context path's permission for the agent presenting the final answer
// (orchestrator.context_paths[].permission); coordination agents always read.
type Access string

const (
	AccessRead  Access = "read"
	AccessWrite Access = "write"
)

func (Access) Values() []Access                   { return []Access{AccessRead, AccessWrite} }
func (Access) noun() string                       { return "permission" }
func (a *Access) UnmarshalText(text []byte) error { return set(a, text) }

// ParseAccess reads a context path's permission ("" is unset).
func ParseAccess(s string) (Access, error) { return parse[Access](s) }

// Strictness is MassGen's answer_novelty_requirement: how different a new answer must be from
// the existing ones ("" is Lenient).
type Strictness string

const (
	Lenient  Strictness = "lenient"
	Balanced Strictness = "balanced"
	Strict   Strictness = "strict"
)

func (Strictness) Values() []Strictness               { return []Strictness{Lenient, Balanced, Strict} }
func (Strictness) noun() string                       { return "level" }
func (s *Strictness) UnmarshalText(text []byte) error { return set(s, text) }

// VotingSensitivity is MassGen's voting_sensitivity: how good the best answer must be for a
// vote, as a Strictness, or ChecklistGated ("" is lenient).
type VotingSensitivity string

// The levels of voting_sensitivity: Strictness's, and ChecklistGated, MassGen's (0.1.50):
// agents score the answers with the submit_checklist tool, whose verdict says whether to vote.
const (
	VotingLenient                    = VotingSensitivity(Lenient)
	VotingBalanced                   = VotingSensitivity(Balanced)
	VotingStrict                     = VotingSensitivity(Strict)
	ChecklistGated VotingSensitivity = "checklist_gated"
)

func (VotingSensitivity) Values() []VotingSensitivity {
	var out []VotingSensitivity
	for _, s := range Strictness("").Values() {
		out = append(out, VotingSensitivity(s))
	}
	return append(out, ChecklistGated)
}
func (VotingSensitivity) noun() string                       { return "level" }
func (s *VotingSensitivity) UnmarshalText(text []byte) error { return set(s, text) }

// SandboxMode is command_sandbox, how agent commands are confined; the sandbox actually used
// (sandbox.Effective) is one of these or SandboxSeatbelt.
type SandboxMode string

const (
	// SandboxAuto (the default, also ""): the best sandbox the system has.
	SandboxAuto       SandboxMode = "auto"
	SandboxBubblewrap SandboxMode = "bubblewrap"
	SandboxNamespaces SandboxMode = "namespaces"
	SandboxLandlock   SandboxMode = "landlock"
	// SandboxNone runs commands unconfined (an explicit opt-out).
	SandboxNone SandboxMode = "none"
	// SandboxSeatbelt is what auto is on macOS; it is not a configurable word.
	SandboxSeatbelt SandboxMode = "seatbelt"
)

func (SandboxMode) Values() []SandboxMode {
	return []SandboxMode{SandboxAuto, SandboxBubblewrap, SandboxNamespaces, SandboxLandlock, SandboxNone}
}
func (SandboxMode) noun() string                       { return "sandbox" }
func (m *SandboxMode) UnmarshalText(text []byte) error { return set(m, text) }

// Check says whether m is a configurable word ("" is auto).
func (m SandboxMode) Check() error {
	_, err := parse[SandboxMode](string(m))
	return err
}

// ParseSandboxMode reads a command_sandbox value ("" is auto).
func ParseSandboxMode(s string) (SandboxMode, error) { return parse[SandboxMode](s) }

// NetworkMode is command_network.mode: what agent commands may reach.
type NetworkMode string

const (
	// NetworkNone: no network at all (the default, also "").
	NetworkNone NetworkMode = "none"
	// NetworkAllowlist: the hosts of the allowlist, through massgen's proxy only.
	NetworkAllowlist NetworkMode = "allowlist"
	// NetworkOpen: any host.
	NetworkOpen NetworkMode = "open"
)

func (NetworkMode) Values() []NetworkMode {
	return []NetworkMode{NetworkNone, NetworkAllowlist, NetworkOpen}
}
func (NetworkMode) noun() string                       { return "mode" }
func (m *NetworkMode) UnmarshalText(text []byte) error { return set(m, text) }

// MCPTransport is an MCP server's type: how massgen talks to it ("" is stdio with a command,
// streamable-http with a url).
type MCPTransport string

const (
	MCPStdio          MCPTransport = "stdio"
	MCPStreamableHTTP MCPTransport = "streamable-http"
	MCPHTTP           MCPTransport = "http" // streamable HTTP too
	MCPSSE            MCPTransport = "sse"
)

func (MCPTransport) Values() []MCPTransport {
	return []MCPTransport{MCPStdio, MCPStreamableHTTP, MCPHTTP, MCPSSE}
}
func (MCPTransport) noun() string                       { return "MCP server type" }
func (t *MCPTransport) UnmarshalText(text []byte) error { return set(t, text) }

// SecurityLevel is MassGen's security.level of an MCP server (and of its env policy): which
// programs may start it and which variables it may be given ("" is strict).
type SecurityLevel string

const (
	SecurityStrict     SecurityLevel = "strict"
	SecurityModerate   SecurityLevel = "moderate"
	SecurityPermissive SecurityLevel = "permissive"
	// SecurityHigh is what MassGen makes of a level it does not know (its configs write it).
	SecurityHigh SecurityLevel = "high"
)

func (SecurityLevel) Values() []SecurityLevel {
	return []SecurityLevel{SecurityStrict, SecurityModerate, SecurityPermissive, SecurityHigh}
}
func (SecurityLevel) noun() string                       { return "level" }
func (l *SecurityLevel) UnmarshalText(text []byte) error { return set(l, text) }

// EnvMode is MassGen's security.env.mode: which list decides an MCP server's variables ("" is
// denylist).
type EnvMode string

const (
	EnvDenylist  EnvMode = "denylist"
	EnvAllowlist EnvMode = "allowlist"
)

func (EnvMode) Values() []EnvMode                  { return []EnvMode{EnvDenylist, EnvAllowlist} }
func (EnvMode) noun() string                       { return "mode" }
func (m *EnvMode) UnmarshalText(text []byte) error { return set(m, text) }

// Phase is the part of a run an agent works in: coordination (answers and votes) or final (the
// presentation); a scripted backend's step names one ("" is either).
type Phase string

const (
	PhaseCoordination Phase = "coordination"
	PhaseFinal        Phase = "final"
)

func (Phase) Values() []Phase                    { return []Phase{PhaseCoordination, PhaseFinal} }
func (Phase) noun() string                       { return "phase" }
func (p *Phase) UnmarshalText(text []byte) error { return set(p, text) }

// Display is how a run is shown (--display, ui.display_type).
type Display string

const (
	// DisplayAuto: live on a terminal, plain otherwise.
	DisplayAuto Display = "auto"
	// DisplayLive: one redrawn panel per agent.
	DisplayLive Display = "live"
	// DisplayPlain: one line per event on stderr.
	DisplayPlain Display = "plain"
	// DisplaySilent: only the final answer.
	DisplaySilent Display = "silent"
)

func (Display) Values() []Display {
	return []Display{DisplayAuto, DisplayLive, DisplayPlain, DisplaySilent}
}
func (Display) noun() string                       { return "display" }
func (d *Display) UnmarshalText(text []byte) error { return set(d, text) }

// displayAliases are the other names a display goes by: MassGen's ui.display_type values
// (rich_terminal, textual_terminal, simple) and a few more.
var displayAliases = map[string]Display{
	"rich": DisplayLive, "rich_terminal": DisplayLive, "textual_terminal": DisplayLive, "terminal": DisplayLive,
	"simple": DisplayPlain, "text": DisplayPlain, "lines": DisplayPlain,
	"quiet": DisplaySilent, "none": DisplaySilent,
}

// DisplayAliases are the other names each display goes by, sorted.
func DisplayAliases() map[Display][]string {
	out := map[Display][]string{}
	for a, d := range displayAliases {
		out[d] = append(out[d], a)
	}
	for _, as := range out {
		slices.Sort(as)
	}
	return out
}

// ParseDisplay reads a display name or alias, in any case ("" is auto).
func ParseDisplay(s string) (Display, error) {
	w := strings.ToLower(strings.TrimSpace(s))
	if d, ok := displayAliases[w]; ok {
		return d, nil
	}
	d, err := parse[Display](w)
	if err != nil {
		return "", &UnknownError{Noun: "display", Value: s, Known: strs(Display("").Values())}
	}
	if d == "" {
		d = DisplayAuto
	}
	return d, nil
}
