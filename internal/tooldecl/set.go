package tooldecl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// Args are a call's arguments, decoded from the model's JSON once: the summary, the permission
// decision and the tool's binding all read this one map.
type Args struct {
	Map map[string]any
	// Err: the arguments are not a JSON object (Map is then nil).
	Err error
}

// Decode decodes a call's arguments; empty or null arguments are an empty object.
func Decode(raw json.RawMessage) Args {
	m := map[string]any{}
	if s := strings.TrimSpace(string(raw)); s != "" && s != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return Args{Err: err}
		}
		if m == nil { // "null" with spaces around
			m = map[string]any{}
		}
	}
	return Args{Map: m}
}

// Set is a list of declared tools in their order.
type Set []Tool

// Lookup finds a tool by its exact name.
func (s Set) Lookup(name string) (Tool, bool) {
	for _, t := range s {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// Table is what the permission engine knows about the tools (give it to permissions.Spec.Tools).
func (s Set) Table() toolargs.Table {
	decls := make([]toolargs.Tool, len(s))
	for i, t := range s {
		decls[i] = t.Decl()
	}
	return toolargs.NewTable(decls...)
}

// MaxSummaryRunes bounds a summary (one line of a terminal panel or a log field).
const MaxSummaryRunes = 200

// Summary renders a call as one readable line for the user: the tool's name, then its declared
// path arguments (the set's declarations, else the reference MCP filesystem server's as the
// permission engine knows them), with what the declaration says matters beside them:
// "write_file index.html (38 B)", "move_file a.txt → b.txt", "execute_command npm test". A tool
// nobody declares (an MCP server's) gets its arguments as key=value pairs. short, when not nil,
// shortens a path for display (relative to the agent's workspace, say). The result may hold any
// character a model sent: displays clean it before printing.
func (s Set) Summary(name string, args Args, short func(string) string) string {
	if short == nil {
		short = func(p string) string { return p }
	}
	if args.Err != nil {
		return Shorten(name+" (unreadable arguments)", MaxSummaryRunes)
	}
	m := args.Map
	own, declared := s.Lookup(toolargs.BaseToolName(name))
	decl, known := toolargs.Tool{}, declared
	if declared {
		decl = own.Decl()
	} else {
		decl, known = toolargs.Table(nil).Known(name)
	}
	var b strings.Builder
	b.WriteString(name)
	switch {
	case decl.Command || (!known && s.Table().IsCommand(name)):
		if c, ok := m["command"].(string); ok {
			b.WriteString(" " + squeeze(c))
		}
		if d, ok := m["work_dir"].(string); ok && d != "" {
			b.WriteString(" (in " + short(d) + ")")
		}
		if _, found := m["command"].(string); !found {
			b.WriteString(genericArgs(m))
		}
	case known:
		b.WriteString(pathArgs(decl, m, short))
		if declared {
			b.WriteString(own.Details(m))
		}
	default:
		b.WriteString(genericArgs(m))
	}
	return Shorten(b.String(), MaxSummaryRunes)
}

// pathArgs renders a tool's declared path arguments in order: "a → b" when a path is read (or
// moved away) and another written, "a, b" otherwise.
func pathArgs(tool toolargs.Tool, m map[string]any, short func(string) string) string {
	var parts []string
	arrow := len(tool.Args) == 2 && tool.Args[0].Access != toolargs.Write && tool.Args[1].Access == toolargs.Write
	for _, a := range tool.Args {
		v, found := m[a.Name]
		if !found || v == nil {
			continue
		}
		parts = append(parts, pathValue(v, short))
	}
	if len(parts) == 0 {
		return ""
	}
	if arrow && len(parts) == 2 {
		return " " + parts[0] + " → " + parts[1]
	}
	return " " + strings.Join(parts, ", ")
}

// pathValue renders one path argument: a path, or the first two of a list and how many more.
func pathValue(v any, short func(string) string) string {
	switch x := v.(type) {
	case string:
		return short(x)
	case []any:
		var names []string
		for i, e := range x {
			if i == 2 {
				names = append(names, fmt.Sprintf("(+%d)", len(x)-2))
				break
			}
			names = append(names, pathValue(e, short))
		}
		return strings.Join(names, ", ")
	}
	return jsonValue(v, 40)
}

// genericArgs renders arguments as key=value pairs in key order, long strings shortened and
// lists and objects only sized.
func genericArgs(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(" " + k + "=" + jsonValue(m[k], 40))
	}
	return b.String()
}

// jsonValue renders a JSON value short: strings quoted and cut at n runes, lists as [N items],
// objects as {…}.
func jsonValue(v any, n int) string {
	switch x := v.(type) {
	case string:
		return Quote(x, n)
	case []any:
		return "[" + Count(len(x), "item") + "]"
	case map[string]any:
		return "{…}"
	case nil:
		return "null"
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// Notes renders a summary's notes: " (a, b)", or "" when there are none.
func Notes(notes ...string) string {
	notes = slices.DeleteFunc(notes, func(s string) bool { return s == "" })
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
}

// Quote is s on one line, cut at n runes, quoted.
func Quote(s string, n int) string { return strconv.Quote(Shorten(squeeze(s), n)) }

// squeeze puts text on one line with single spaces.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// Shorten cuts s to at most n runes, marking the cut with "…".
func Shorten(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "…"
		}
		i++
	}
	return s
}

// Size is a size for people: 38 B, 1.5 KB, 2.0 MB.
func Size(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}

// Count is "1 word" or "N words".
func Count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// If is s when cond holds, else "" (a note shown only when it applies).
func If(cond bool, s string) string {
	if cond {
		return s
	}
	return ""
}
