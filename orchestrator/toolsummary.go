package orchestrator

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// maxSummaryRunes bounds a tool summary (it is one line of a terminal panel or a log field).
const maxSummaryRunes = 200

// ToolSummary renders a tool call as one readable line for the user: the tool's name, then its
// declared path arguments (tools, usually filesystem.Table(), as the permission engine knows
// them), with what matters about the call beside them: "write_file index.html (38 B)",
// "move_file a.txt → b.txt", "execute_command npm test". A tool the table does not know (an
// MCP server's) gets its arguments as key=value pairs. shortPath, when not nil, shortens a
// path argument for display (relative to the agent's workspace, say). The result may hold any
// character a model sent: displays clean it before printing.
func ToolSummary(tools toolargs.Table, name string, args json.RawMessage, shortPath func(string) string) string {
	if shortPath == nil {
		shortPath = func(p string) string { return p }
	}
	var m map[string]any
	if s := strings.TrimSpace(string(args)); s != "" && s != "null" {
		if err := json.Unmarshal(args, &m); err != nil {
			return shorten(name+" (unreadable arguments)", maxSummaryRunes)
		}
	}
	tool, known := tools.Known(name)
	var b strings.Builder
	b.WriteString(name)
	switch {
	case tool.Command || toolargs.IsCommandTool(name):
		if c, ok := m["command"].(string); ok {
			b.WriteString(" " + squeeze(c))
		}
		if d, ok := m["work_dir"].(string); ok && d != "" {
			b.WriteString(" (in " + shortPath(d) + ")")
		}
		if _, found := m["command"].(string); !found {
			b.WriteString(genericArgs(m))
		}
	case known:
		b.WriteString(pathArgs(tool, m, shortPath))
		b.WriteString(callDetails(toolargs.BaseToolName(name), m))
	default:
		b.WriteString(genericArgs(m))
	}
	return shorten(b.String(), maxSummaryRunes)
}

// pathArgs renders a known tool's declared path arguments in order: "a → b" when a path is
// read (or moved away) and another written, "a, b" otherwise.
func pathArgs(tool toolargs.Tool, m map[string]any, shortPath func(string) string) string {
	var parts []string
	arrow := len(tool.Args) == 2 && tool.Args[0].Access != toolargs.Write && tool.Args[1].Access == toolargs.Write
	for _, a := range tool.Args {
		v, found := m[a.Name]
		if !found || v == nil {
			continue
		}
		parts = append(parts, pathValue(v, shortPath))
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
func pathValue(v any, shortPath func(string) string) string {
	switch x := v.(type) {
	case string:
		return shortPath(x)
	case []any:
		var names []string
		for i, e := range x {
			if i == 2 {
				names = append(names, fmt.Sprintf("(+%d)", len(x)-2))
				break
			}
			names = append(names, pathValue(e, shortPath))
		}
		return strings.Join(names, ", ")
	}
	return jsonValue(v, 40)
}

// callDetails is what a known tool's other arguments say worth showing: the size written, the
// number of edits, the pattern searched, a recursive delete.
func callDetails(base string, m map[string]any) string {
	var notes []string
	switch base {
	case "write_file":
		if c, ok := m["content"].(string); ok {
			notes = append(notes, byteSize(len(c)))
		}
	case "edit_file":
		if e, ok := m["edits"].([]any); ok {
			notes = append(notes, plural(len(e), "edit"))
		}
		if d, _ := m["dryRun"].(bool); d {
			notes = append(notes, "dry run")
		}
	case "read_file", "read_text_file":
		if n, ok := m["head"].(float64); ok {
			notes = append(notes, "first "+plural(int(n), "line"))
		}
		if n, ok := m["tail"].(float64); ok {
			notes = append(notes, "last "+plural(int(n), "line"))
		}
	case "search_files":
		if p, ok := m["pattern"].(string); ok {
			return " " + strconv.Quote(shorten(p, 40))
		}
	case "delete_file":
		if r, _ := m["recursive"].(bool); r {
			notes = append(notes, "recursive")
		}
	case "copy_file", "copy_files_batch":
		if o, _ := m["overwrite"].(bool); o {
			notes = append(notes, "overwrite")
		}
	case "delete_files_batch":
		if d, _ := m["dry_run"].(bool); d {
			notes = append(notes, "dry run")
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
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
		return strconv.Quote(shorten(squeeze(x), n))
	case []any:
		return "[" + plural(len(x), "item") + "]"
	case map[string]any:
		return "{…}"
	case nil:
		return "null"
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// squeeze puts text on one line with single spaces.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// byteSize is a size for people: 38 B, 1.5 KB, 2.0 MB.
func byteSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// shortPath shows a path the agent gave relative to its workspace, or to its temp workspace
// (agent2/index.html: another agent's snapshot), when it lies there; other paths as given.
func (a *agent) shortPath(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	c := filepath.Clean(p)
	for _, root := range []string{a.workspace, a.tempDir} {
		if root == "" {
			continue
		}
		if root = filepath.Clean(root); c == root || !pathx.Within(c, root) {
			continue
		}
		if rel, err := filepath.Rel(root, c); err == nil {
			return rel
		}
	}
	return p
}
