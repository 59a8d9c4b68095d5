package permissions

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// argDecl is one declared path argument of one of our tools.
type argDecl struct {
	name     string
	access   Access
	list     bool
	optional bool
}

// ourTools are massgen's own tools (and the MCP filesystem server's names) with their path
// arguments. Batch tools are checked here on their base paths; the tool checks every matched
// file again through Guard.CheckPath.
var ourTools = map[string][]argDecl{
	"read_file":                 {{name: "path"}},
	"read_text_file":            {{name: "path"}},
	"read_media_file":           {{name: "path"}},
	"read_multiple_files":       {{name: "paths", list: true}},
	"write_file":                {{name: "path", access: Write}},
	"edit_file":                 {{name: "path", access: Write}},
	"create_directory":          {{name: "path", access: Write}},
	"list_directory":            {{name: "path"}},
	"list_directory_with_sizes": {{name: "path"}},
	"directory_tree":            {{name: "path"}},
	"move_file":                 {{name: "source", access: Write}, {name: "destination", access: Write}},
	"search_files":              {{name: "path"}},
	"get_file_info":             {{name: "path"}},
	"list_allowed_directories":  {},
	"copy_file":                 {{name: "source_path"}, {name: "destination_path", access: Write}},
	"copy_files_batch":          {{name: "source_base_path"}, {name: "destination_base_path", access: Write}},
	"delete_file":               {{name: "path", access: Write}},
	"delete_files_batch":        {{name: "base_path", access: Write}},
	"compare_directories":       {{name: "dir1"}, {name: "dir2"}},
	"compare_files":             {{name: "file1"}, {name: "file2"}},
	"execute_command":           {{name: "work_dir", optional: true}},
}

// workflowTools are coordination tools, not file tools.
var workflowTools = map[string]bool{"new_answer": true, "vote": true}

// nativeNonFile are other runtimes' built-in tools whose names look file-related but that take
// no path (Claude Code's TodoWrite, ...).
var nativeNonFile = map[string]bool{
	"TodoWrite": true, "TodoRead": true, "Task": true, "WebFetch": true, "WebSearch": true,
	"ExitPlanMode": true, "BashOutput": true, "KillBash": true, "KillShell": true,
	"ListMcpResourcesTool": true, "ReadMcpResourceTool": true, "SlashCommand": true,
}

// cwdDefault are native tools whose path argument defaults to the working directory.
var cwdDefault = map[string]bool{"Grep": true, "Glob": true}

// commandNames are tools that run shell commands.
var commandNames = map[string]bool{
	"execute_command": true, "bash": true, "shell": true, "exec": true, "sh": true,
	"run_command": true, "run_shell_command": true, "execute_shell_command": true,
	"shell_exec": true, "exec_command": true, "terminal": true, "run_terminal_command": true,
	"execute_bash": true, "run_bash": true, "run_shell": true, "command": true,
}

// writeWords classify unknown tools by name (spec 001: write, edit, create, move, copy,
// delete, remove, plus a few obvious siblings).
var writeWords = []string{"write", "edit", "create", "move", "copy", "delete", "remove",
	"rename", "mkdir", "rmdir", "append", "patch", "save", "touch", "truncate", "unlink",
	"upload", "replace", "modify", "update", "put", "insert", "overwrite"}

// fileWords make an unknown tool "file-related": with no path found it is refused.
var fileWords = map[string]bool{"file": true, "files": true, "dir": true, "dirs": true,
	"directory": true, "directories": true, "folder": true, "folders": true, "path": true,
	"paths": true, "fs": true, "filesystem": true, "notebook": true, "read": true, "write": true,
	"edit": true, "ls": true, "glob": true, "grep": true, "cat": true, "mkdir": true,
	"rmdir": true, "rm": true, "mv": true, "cp": true, "touch": true, "multiedit": true}

// BaseToolName strips every mcp__<server>__ prefix: mcp__fs__read_file -> read_file.
func BaseToolName(tool string) string {
	for strings.HasPrefix(tool, "mcp__") {
		rest := tool[len("mcp__"):]
		i := strings.Index(rest, "__")
		if i < 0 || i+2 >= len(rest) {
			return tool
		}
		tool = rest[i+2:]
	}
	return tool
}

// IsCommandTool reports whether the tool runs shell commands.
func IsCommandTool(tool string) bool {
	b := BaseToolName(tool)
	return commandNames[b] || commandNames[strings.ToLower(b)]
}

// IsWriteTool reports whether the tool may modify files (such tools are not offered to an agent
// that cannot write). Commands are not write tools: their writes are checked word by word.
func IsWriteTool(tool string) bool {
	b := BaseToolName(tool)
	if decl, ok := ourTools[b]; ok {
		for _, d := range decl {
			if d.access == Write {
				return true
			}
		}
		return false
	}
	if workflowTools[b] || nativeNonFile[b] || IsCommandTool(b) {
		return false
	}
	return nameLooksWrite(b)
}

func nameLooksWrite(b string) bool {
	l := strings.ToLower(b)
	for _, w := range writeWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// nameLooksFile reports whether an unknown tool's name suggests it touches files.
func nameLooksFile(b string) bool {
	for _, w := range nameTokens(b) {
		if fileWords[w] {
			return true
		}
	}
	return false
}

// nameTokens splits snake_case, kebab-case and CamelCase into lower-case words.
func nameTokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// errNoPath is returned (wrapped) for file-related tools where no path could be found.
var errNoPath = errors.New("no path argument found")

// ExtractPaths classifies a tool call and returns every path argument with what the call does to
// it. An error means the call cannot be judged and must be denied (fail closed): a required
// argument missing or of the wrong type, a file-looking tool without a path, a command that does
// not parse or is dangerous.
func ExtractPaths(tool string, args map[string]any) ([]PathAccess, error) {
	ex, err := extract(tool, args)
	if err != nil {
		return nil, err
	}
	return ex.paths, nil
}

// extraction is ExtractPaths' full result; commands carry their analysis.
type extraction struct {
	paths   []PathAccess
	command string
	cmd     *cmdAnalysis
}

func extract(tool string, args map[string]any) (*extraction, error) {
	b := BaseToolName(tool)
	ex := &extraction{}
	if workflowTools[b] {
		return ex, nil
	}
	if decl, ok := ourTools[b]; ok {
		access := func(d argDecl) Access {
			if b == "edit_file" {
				// A dry run only shows the diff: reading is enough.
				if v, ok := args["dryRun"].(bool); ok && v {
					return Read
				}
			}
			return d.access
		}
		for _, d := range decl {
			v, present := args[d.name]
			if !present || v == nil {
				if d.optional {
					continue
				}
				return nil, fmt.Errorf("%s: missing required path argument %q", tool, d.name)
			}
			if d.list {
				list, ok := v.([]any)
				if !ok {
					if ss, ok2 := v.([]string); ok2 {
						for _, s := range ss {
							list = append(list, s)
						}
					} else {
						return nil, fmt.Errorf("%s: argument %q must be a list of paths", tool, d.name)
					}
				}
				if len(list) == 0 {
					return nil, fmt.Errorf("%s: argument %q is empty", tool, d.name)
				}
				for i, item := range list {
					s, ok := item.(string)
					if !ok {
						return nil, fmt.Errorf("%s: %s[%d] must be a string", tool, d.name, i)
					}
					ex.paths = append(ex.paths, PathAccess{Arg: fmt.Sprintf("%s[%d]", d.name, i), Path: s, Access: access(d)})
				}
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s: argument %q must be a string path", tool, d.name)
			}
			ex.paths = append(ex.paths, PathAccess{Arg: d.name, Path: s, Access: access(d)})
		}
		if b == "execute_command" {
			if err := ex.addCommand(tool, args); err != nil {
				return nil, err
			}
		}
		if b != tool {
			// Behind an MCP prefix the server is not ours: undeclared arguments may be paths too.
			declared := map[string]bool{}
			for _, d := range decl {
				declared[d.name] = true
			}
			if b == "execute_command" {
				declared["command"] = true
			}
			acc := Read
			if IsWriteTool(b) {
				acc = Write
			}
			scanArgs(args, "", acc, declared, &ex.paths)
		}
		return ex, nil
	}
	if nativeNonFile[b] {
		return ex, nil
	}
	if IsCommandTool(b) {
		// Working directory arguments first.
		scanArgs(args, "", Read, map[string]bool{"command": true, "cmd": true, "script": true, "commands": true}, &ex.paths)
		if err := ex.addCommand(tool, args); err != nil {
			return nil, err
		}
		return ex, nil
	}
	acc := Read
	if nameLooksWrite(b) {
		acc = Write
	}
	scanArgs(args, "", acc, nil, &ex.paths)
	if strings.Contains(strings.ToLower(b), "copy") {
		// copy-like: sources are read, the rest written.
		for i := range ex.paths {
			if isSourceKey(ex.paths[i].Arg) {
				ex.paths[i].Access = Read
			}
		}
	}
	if len(ex.paths) == 0 && cwdDefault[b] {
		// Claude Code's Grep and Glob search the working directory (the workspace) by default.
		ex.paths = append(ex.paths, PathAccess{Arg: "path (default: workspace)", Path: "", Access: Read})
	}
	if len(ex.paths) == 0 && nameLooksFile(b) {
		return nil, fmt.Errorf("%s looks like a file tool but no path argument was found: %w", tool, errNoPath)
	}
	return ex, nil
}

func (ex *extraction) addCommand(tool string, args map[string]any) error {
	var cmd string
	found := false
	for _, k := range []string{"command", "cmd", "script", "commands"} {
		if v, ok := args[k]; ok {
			switch t := v.(type) {
			case string:
				cmd, found = t, true
			case []any:
				parts := make([]string, 0, len(t))
				for _, x := range t {
					s, ok := x.(string)
					if !ok {
						return fmt.Errorf("%s: %q must be a string or a list of strings", tool, k)
					}
					parts = append(parts, shellQuote(s))
				}
				cmd, found = strings.Join(parts, " "), true
			default:
				return fmt.Errorf("%s: %q must be a string", tool, k)
			}
			break
		}
	}
	if !found {
		return fmt.Errorf("%s: missing the command argument", tool)
	}
	workDir := ""
	hasWorkDir := false
	for _, pa := range ex.paths {
		if isWorkDirKey(pa.Arg) {
			workDir, hasWorkDir = pa.Path, true
			break
		}
	}
	if !hasWorkDir {
		// The command runs in the workspace: it must exist for this agent.
		ex.paths = append(ex.paths, PathAccess{Arg: "work_dir (default: workspace)", Path: "", Access: Read})
	}
	a, err := analyzeCommand(cmd, workDir)
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	ex.command = cmd
	ex.cmd = a
	ex.paths = append(ex.paths, a.paths...)
	return nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func normKey(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r != '_' && r != '-' && r != ' ' && r != '.' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

var pathKeys = map[string]bool{
	"path": true, "paths": true, "file": true, "files": true, "filename": true, "filenames": true,
	"filepath": true, "filepaths": true, "source": true, "sources": true, "src": true,
	"destination": true, "dest": true, "dst": true, "target": true, "targets": true, "dir": true,
	"dirs": true, "directory": true, "directories": true, "folder": true, "cwd": true,
	"workdir": true, "workingdirectory": true, "workingdir": true, "location": true,
	"root": true, "from": true, "to": true, "output": true, "input": true, "notebook": true,
	"uri": true, "url": false,
}

var pathSuffixes = []string{"path", "paths", "file", "files", "filename", "dir", "dirs",
	"directory", "directories", "folder", "folders", "location"}
var pathPrefixes = []string{"source", "src", "dest", "target"}

// isPathKey reports whether an argument name denotes a path.
func isPathKey(k string) bool {
	n := normKey(k)
	if pathKeys[n] {
		return true
	}
	for _, s := range pathSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	for _, s := range pathPrefixes {
		if strings.HasPrefix(n, s) {
			return true
		}
	}
	// dir1, file2, path3 ...
	trim := strings.TrimRight(n, "0123456789")
	return trim != n && (trim == "dir" || trim == "file" || trim == "path")
}

func isSourceKey(arg string) bool {
	n := normKey(arg)
	return strings.HasPrefix(n, "source") || strings.HasPrefix(n, "src") || strings.HasPrefix(n, "from") || strings.HasPrefix(n, "input")
}

func isWorkDirKey(arg string) bool {
	switch normKey(arg) {
	case "workdir", "cwd", "workingdirectory", "workingdir", "dir", "directory":
		return true
	}
	return false
}

// contentKeys hold data, not paths: their values are not taken as paths by their look.
var contentKeys = map[string]bool{"content": true, "contents": true, "text": true, "body": true,
	"data": true, "newstring": true, "oldstring": true, "newstr": true, "oldstr": true,
	"message": true, "query": true, "pattern": true, "patterns": true, "description": true,
	"prompt": true, "code": true, "edits": true, "newtext": true, "oldtext": true, "regex": true,
	"glob": true, "includepatterns": true, "excludepatterns": true, "title": true, "comment": true,
	"url": true, "command": true, "cmd": true, "script": true, "replacement": true}

// looksLikePath: an absolute path or one starting with ~, ./, ../ (a single line).
func looksLikePath(s string) bool {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\r") {
		return false
	}
	return strings.HasPrefix(s, "/") || s == "~" || strings.HasPrefix(s, "~/") ||
		strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || s == "." || s == ".." ||
		strings.HasPrefix(s, "file://")
}

// scanArgs finds path arguments of an unknown tool by name and by value, at any depth.
func scanArgs(v any, prefix string, acc Access, skip map[string]bool, out *[]PathAccess) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys) // deterministic order: messages and tests
		for _, k := range keys {
			if prefix == "" && skip[k] {
				continue
			}
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			val := t[k]
			if isPathKey(k) {
				if addNamed(val, name, acc, out) {
					continue
				}
			}
			if contentKeys[normKey(k)] {
				// Data, not a path by its look; a file:// URL is a path whatever the key.
				if str, ok := val.(string); ok && strings.HasPrefix(str, "file://") {
					*out = append(*out, PathAccess{Arg: name, Path: fileURL(str), Access: acc})
				}
				continue
			}
			scanArgs(val, name, acc, nil, out)
		}
	case []any:
		for i, x := range t {
			scanArgs(x, fmt.Sprintf("%s[%d]", prefix, i), acc, nil, out)
		}
	case string:
		if looksLikePath(t) {
			*out = append(*out, PathAccess{Arg: prefix, Path: fileURL(t), Access: acc})
		}
	}
}

// addNamed adds a value found under a path-named key; false if it is not a string or list of
// strings (then the value is scanned like any other).
func addNamed(v any, name string, acc Access, out *[]PathAccess) bool {
	switch t := v.(type) {
	case string:
		*out = append(*out, PathAccess{Arg: name, Path: fileURL(t), Access: acc})
		return true
	case []any:
		all := true
		for _, x := range t {
			if _, ok := x.(string); !ok {
				all = false
			}
		}
		if !all || len(t) == 0 {
			return false
		}
		for i, x := range t {
			*out = append(*out, PathAccess{Arg: fmt.Sprintf("%s[%d]", name, i), Path: fileURL(x.(string)), Access: acc})
		}
		return true
	}
	return false
}

func fileURL(s string) string {
	if rest, ok := strings.CutPrefix(s, "file://"); ok {
		return rest
	}
	return s
}
