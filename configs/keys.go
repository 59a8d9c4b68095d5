package configs

import (
	"fmt"
	"slices"
	"strings"
)

// Status says what massgen does with a config key or backend type. The key table (keytable.go)
// gives every key of MassGen's schema one; validation, `configs show --resolved`, the start of a
// run and docs/massgen-compatibility.md all read it.
type Status string

const (
	// Implemented keys do what MassGen documents (or, for massgen's own keys, what the docs say).
	Implemented Status = "implemented"
	// Ignored keys are accepted and not acted on; the key's Note says what happens instead, and
	// validation and the start of a run warn about them.
	Ignored Status = "ignored"
	// Refused keys and backend types make validation fail with the key's Note as the reason.
	Refused Status = "refused"
)

// Key is one entry of the key table.
type Key struct {
	// Path is the key's place in the schema: "orchestrator.voting_sensitivity",
	// "agents[].backend.mcp_servers[].security" ("[]" stands for any list item).
	Path string
	// On restricts the entry to backend types or backend families (see BackendType.Family) for
	// keys under agents[].backend; empty means every backend. The most specific entry wins: one
	// naming the type, then one naming its family, then the one with On empty.
	On []string
	// Status is what massgen does with the key.
	Status Status
	// Note says, for an implemented key, what it does; for an ignored key, what happens instead;
	// for a refused key, why and what to write instead.
	Note string
	// Open means the value's own keys are not checked: they are passed on as written (extra_body)
	// or named by the user (env variables).
	Open bool
	// Same lists values of an ignored key that ask for what massgen does anyway: they draw no
	// warning (logging_enabled: true).
	Same []string
	// Massgen marks massgen's own keys, which MassGen does not have.
	Massgen bool
	// Since is the MassGen release that introduced a key after 0.1.12 ("0.1.38"), from MassGen's
	// history; empty for the keys of 0.1.12's schema and massgen's own.
	Since string
}

// BackendType is one `type:` value of agents[].backend.
type BackendType struct {
	Name string
	// Family groups types that share a backend implementation and so the same options:
	// "openai" (Responses API), "chat" (Chat Completions), "claude" (Messages API), "gemini",
	// "claude_code", "scripted". Empty: the backends package cannot build the type at all.
	Family string
	Status Status
	Note   string
	// ModelRequired: the backend has no default model, so `model:` must be set.
	ModelRequired bool
	// Program is a program the backend runs, which must be on PATH (Preflight checks it);
	// Install says how to get it.
	Program, Install string
	Massgen          bool
	// CLIAgent marks a refused coding-agent CLI: its refusal names the CLI agents massgen does
	// drive (Reason).
	CLIAgent bool
}

// Reason is why a refused backend type is refused: its note, and for a coding-agent CLI the
// ones massgen drives instead (the implemented types that run a program).
func (bt BackendType) Reason() string {
	if !bt.CLIAgent {
		return bt.Note
	}
	var clis []string
	for _, o := range backendTypeTable {
		if o.Status == Implemented && o.Program != "" {
			clis = append(clis, o.Name)
		}
	}
	return fmt.Sprintf("%s Coding-agent CLIs massgen drives, with its own tools turned off: %s; or use a model backend (%s).",
		bt.Note, strings.Join(clis, ", "), strings.Join(apiBackendExamples, ", "))
}

// apiBackendExamples are named in refusals that suggest a model backend instead.
var apiBackendExamples = []string{"openai", "claude", "gemini", "chatcompletion", "..."}

// Keys returns the key table, in documentation order.
func Keys() []Key { return slices.Clone(keyTable) }

// BackendTypes returns the table of backend types, in documentation order.
func BackendTypes() []BackendType { return slices.Clone(backendTypeTable) }

// LookupBackendType finds a backend type by name.
func LookupBackendType(name string) (BackendType, bool) {
	for _, bt := range backendTypeTable {
		if bt.Name == name {
			return bt, true
		}
	}
	return BackendType{}, false
}

// KnownBackendTypes returns the backend types a config may name and the backends package can
// build.
// backends.TestKnownTypesMatchConfigs keeps this list and the backends' in step.
func KnownBackendTypes() []string {
	var names []string
	for _, bt := range backendTypeTable {
		if bt.Family != "" {
			names = append(names, bt.Name)
		}
	}
	return names
}

func backendFamily(typ string) string {
	bt, _ := LookupBackendType(typ)
	return bt.Family
}

// keyIndex maps a path to the indexes of its entries in keyTable; children maps a parent path
// to the last segments of its children. Both are built once from keyTable and never changed.
var keyIndex, keyChildren = indexKeys(keyTable)

func indexKeys(table []Key) (map[string][]int, map[string][]string) {
	idx := map[string][]int{}
	kids := map[string][]string{}
	for i, k := range table {
		if len(idx[k.Path]) == 0 {
			parent, last := splitKeyPath(k.Path)
			kids[parent] = append(kids[parent], last)
		}
		idx[k.Path] = append(idx[k.Path], i)
	}
	return idx, kids
}

// splitKeyPath splits "a.b[].c" into "a.b[]" and "c".
func splitKeyPath(p string) (parent, last string) {
	i := strings.LastIndexByte(p, '.')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// LookupKey returns the table entry for a schema path ("agents[].backend.betas") as it applies
// to a backend type ("" outside agents[].backend or when the type is unknown). A path with
// concrete indexes ("agents[2].backend.betas") is accepted too.
func LookupKey(path, backendType string) (Key, bool) {
	path = canonicalPath(path)
	if k, ok := lookupExact(path, backendType); ok {
		return k, true
	}
	parent, _ := splitKeyPath(path)
	return lookupExact(parent+".*", backendType)
}

func lookupExact(path, backendType string) (Key, bool) {
	family := backendFamily(backendType)
	best, bestScore := -1, -1
	for _, i := range keyIndex[path] {
		k := keyTable[i]
		score := -1
		switch {
		case len(k.On) == 0:
			score = 0
		case backendType != "" && slices.Contains(k.On, backendType):
			score = 2
		case family != "" && slices.Contains(k.On, family):
			score = 1
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return Key{}, false
	}
	return keyTable[best], true
}

// siblingKeys returns the keys known under a parent path for a backend type, for "did you mean".
func siblingKeys(parent, backendType string) []string {
	var out []string
	for _, name := range keyChildren[parent] {
		if name == "*" {
			continue
		}
		if _, ok := lookupExact(joinPath(parent, name), backendType); ok {
			out = append(out, name)
		}
	}
	return out
}

// canonicalPath turns list indexes into "[]": agents[2].backend -> agents[].backend.
func canonicalPath(p string) string {
	if !strings.Contains(p, "[") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		b.WriteByte(p[i])
		if p[i] == '[' {
			for i+1 < len(p) && p[i+1] != ']' {
				i++
			}
		}
	}
	return b.String()
}
