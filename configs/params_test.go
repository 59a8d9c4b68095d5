package configs

import (
	"slices"
	"strings"
	"testing"
)

// runnableTypes are the backend types a config may name and massgen runs.
func runnableTypes() []string {
	var out []string
	for _, bt := range backendTypeTable {
		if bt.Family != "" && bt.Status == Implemented {
			out = append(out, bt.Name)
		}
	}
	return out
}

// keyImplemented reports whether the key table says massgen acts on agents[].backend.NAME for
// a backend type: an implemented entry of its own, or one inside an open mapping (reasoning on
// openai is sent as written).
func keyImplemented(name, btype string) bool {
	path := "agents[].backend." + name
	if k, ok := lookupExact(path, btype); ok {
		return k.Status == Implemented
	}
	parent, _ := splitKeyPath(path)
	if parent == "agents[].backend" {
		return false
	}
	k, ok := lookupExact(parent, btype)
	return ok && k.Status == Implemented && k.Open
}

// notParams are the implemented backend keys that are not option values (the backend's
// identity, its tools, its workspace, its permissions): the param table leaves them out.
var notParams = []string{"type", "model", "api_key", "base_url", "cwd", "cwd_owned", "mcp_servers", "script",
	"custom_tools", "command_line_", "exclude_tools", "permissions", "enable_mcp_command_line"}

func isNotParam(name string) bool {
	for _, p := range notParams {
		if name == p || strings.HasPrefix(name, p+".") || strings.HasPrefix(name, p+"[]") || (strings.HasSuffix(p, "_") && strings.HasPrefix(name, p)) {
			return true
		}
	}
	return false
}

// The param table and the key table agree, for every backend type massgen runs: every option
// the param table types is a key the key table implements for that type, and every implemented
// backend key that is an option value has a param entry.
func TestParamTableMatchesKeyTable(t *testing.T) {
	types := runnableTypes()
	var names []string
	for _, p := range paramTable {
		if !slices.Contains(names, p.Name) {
			names = append(names, p.Name)
		}
	}
	for _, name := range names {
		for _, bt := range types {
			_, isParam := LookupParam(name, bt)
			if isParam && !keyImplemented(name, bt) {
				t.Errorf("param %s on %s: the key table does not implement agents[].backend.%s there", name, bt, name)
			}
		}
	}
	for _, k := range keyTable {
		name, ok := strings.CutPrefix(k.Path, "agents[].backend.")
		if !ok || isNotParam(name) || strings.HasSuffix(name, "*") {
			continue
		}
		for _, bt := range types {
			if !keyImplemented(name, bt) {
				continue
			}
			if _, ok := LookupParam(name, bt); !ok {
				t.Errorf("key agents[].backend.%s is implemented on %s but the param table has no entry for it there", name, bt)
			}
		}
	}
}
