package permissions

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode"

	"github.com/massgen-go/massgen/permissions/shellcmd"
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

// exempt reports whether a name is one of the exemptions above. Only unprefixed names are: an
// MCP server may call its tool "new_answer" or "Task", but it is still an unknown tool that may
// touch files, so behind an mcp__<server>__ prefix it is classified like any other.
func exempt(set map[string]bool, tool string) bool { return set[tool] }

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
	if exempt(workflowTools, tool) || exempt(nativeNonFile, tool) || IsCommandTool(b) {
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
	cmd     *shellcmd.Analysis
}

func extract(tool string, args map[string]any) (*extraction, error) {
	return extractWith(tool, args, false)
}

// extractWith is extract; strict: commands run without the kernel sandbox (see shellcmd.Analyze).
func extractWith(tool string, args map[string]any, strict bool) (*extraction, error) {
	b := BaseToolName(tool)
	ex := &extraction{}
	if exempt(workflowTools, tool) {
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
			if err := ex.addCommand(tool, args, strict); err != nil {
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
			if err := scanArgs(args, acc, declared, &ex.paths); err != nil {
				return nil, fmt.Errorf("%s: %w", tool, err)
			}
		}
		return ex, nil
	}
	if exempt(nativeNonFile, tool) {
		return ex, nil
	}
	if IsCommandTool(b) {
		// Working directory arguments first.
		if err := scanArgs(args, Read, map[string]bool{"command": true, "cmd": true, "script": true, "commands": true}, &ex.paths); err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		if err := ex.addCommand(tool, args, strict); err != nil {
			return nil, err
		}
		return ex, nil
	}
	acc := Read
	if nameLooksWrite(b) || carriesContent(args) {
		acc = Write
	}
	if err := scanArgs(args, acc, nil, &ex.paths); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if strings.Contains(strings.ToLower(b), "copy") {
		// copy-like: sources are read, the rest written.
		for i := range ex.paths {
			if isSourceKey(ex.paths[i].Arg) {
				ex.paths[i].Access = Read
			}
		}
	}
	if len(ex.paths) == 0 && exempt(cwdDefault, tool) {
		// Claude Code's Grep and Glob search the working directory (the workspace) by default.
		ex.paths = append(ex.paths, PathAccess{Arg: "path (default: workspace)", Path: "", Access: Read})
	}
	if len(ex.paths) == 0 && nameLooksFile(b) {
		return nil, fmt.Errorf("%s looks like a file tool but no path argument was found: %w", tool, errNoPath)
	}
	return ex, nil
}

func (ex *extraction) addCommand(tool string, args map[string]any, strict bool) error {
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
	a, err := shellcmd.Analyze(cmd, workDir, strict)
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	ex.command = cmd
	ex.cmd = a
	ex.paths = append(ex.paths, a.Paths...)
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

// writeContentKeys, at the top level of an unknown tool's arguments, mean it is handed content to
// put somewhere: its paths are taken as written whatever its name says.
var writeContentKeys = map[string]bool{"content": true, "contents": true, "newstring": true,
	"newstr": true, "newtext": true, "newcontent": true, "data": true, "body": true, "edits": true,
	"patch": true, "diff": true, "filecontent": true, "filetext": true}

func carriesContent(args map[string]any) bool {
	for k := range args {
		if writeContentKeys[normKey(k)] {
			return true
		}
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

// maxArgPaths bounds the path arguments one call may carry: past it the call is refused rather
// than judged path by path (a decision must stay cheap whatever the model sends).
const maxArgPaths = 4096

// looksLikePath: an absolute path, one starting with ~, ./, ../, a file: URL, or any value with
// a ".." component (sub/../../x climbs out as well as ../x does). Single line only.
func looksLikePath(s string) bool {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\r") {
		return false
	}
	return strings.HasPrefix(s, "/") || s == "~" || strings.HasPrefix(s, "~/") ||
		strings.HasPrefix(s, "./") || s == "." || hasDotDotComponent(s) || isFileURL(s)
}

// hasDotDotComponent: a ".." between separators ('/' or, for servers on other systems, '\\').
func hasDotDotComponent(s string) bool {
	for _, c := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if c == ".." {
			return true
		}
	}
	return false
}

// isFileURL: the scheme is "file" in any case, with or without "//" (file:/abs, file:///abs,
// FILE://host/abs).
func isFileURL(s string) bool {
	return len(s) >= 5 && strings.EqualFold(s[:5], "file:")
}

// destKeys are argument names (normalised) that name what a tool writes, whatever its name says.
var destKeys = map[string]bool{"dest": true, "dst": true, "destination": true, "destinations": true,
	"target": true, "targets": true, "output": true, "outputs": true, "out": true, "to": true,
	"outfile": true, "outdir": true, "outpath": true, "saveas": true, "saveto": true, "into": true}

var destPrefixes = []string{"dest", "dst", "target", "output", "save", "write", "export"}
var destSuffixes = []string{"dest", "destination", "output", "target"}

// isDestKey reports whether an argument name denotes a destination: target_file, dest,
// output_path, save_to, out_dir, ... An unknown tool writes there even when its name has no
// write word (mcp__x__render(output=...)).
func isDestKey(k string) bool {
	n := normKey(k)
	if destKeys[n] {
		return true
	}
	for _, p := range destPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, p := range destSuffixes {
		if strings.HasSuffix(n, p) {
			return true
		}
	}
	// out_file, to_path, out_dir ...
	for _, p := range []string{"out", "to"} {
		if rest, ok := strings.CutPrefix(n, p); ok && rest != "" {
			for _, s := range pathSuffixes {
				if rest == s {
					return true
				}
			}
		}
	}
	return false
}

// argScanner finds path arguments of an unknown tool by name and by value, at any depth.
type argScanner struct {
	out *[]PathAccess
	err error
}

// scanArgs scans args (skipping the top-level keys in skip); an error means a value cannot be
// judged (an ambiguous file URL, too many paths): the call is refused.
func scanArgs(args map[string]any, acc Access, skip map[string]bool, out *[]PathAccess) error {
	s := &argScanner{out: out}
	s.scan(args, "", acc, skip)
	return s.err
}

func (s *argScanner) add(arg, val string, acc Access) {
	if s.err != nil {
		return
	}
	if len(*s.out) >= maxArgPaths {
		s.err = fmt.Errorf("more than %d path arguments to check", maxArgPaths)
		return
	}
	p, err := filePathOf(val)
	if err != nil {
		s.err = fmt.Errorf("argument %s: %w", arg, err)
		return
	}
	*s.out = append(*s.out, PathAccess{Arg: arg, Path: p.path, Access: acc})
	if p.alt != "" {
		// A server may or may not decode the URL: both readings must pass.
		*s.out = append(*s.out, PathAccess{Arg: arg + " (undecoded)", Path: p.alt, Access: acc})
	}
}

func (s *argScanner) scan(v any, prefix string, acc Access, skip map[string]bool) {
	if s.err != nil {
		return
	}
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
			kacc := acc
			if isDestKey(k) {
				kacc = Write
			}
			if isPathKey(k) || destKeys[normKey(k)] {
				if s.addNamed(val, name, kacc) {
					continue
				}
			}
			if contentKeys[normKey(k)] {
				// Data, not a path by its look; a file URL is a path whatever the key.
				if str, ok := val.(string); ok && isFileURL(str) && !strings.ContainsAny(str, "\n\r") {
					s.add(name, str, kacc)
				}
				continue
			}
			s.scan(val, name, kacc, nil)
		}
	case []any:
		for i, x := range t {
			s.scan(x, fmt.Sprintf("%s[%d]", prefix, i), acc, nil)
		}
	case string:
		if looksLikePath(t) {
			s.add(prefix, t, acc)
		}
	}
}

// addNamed adds a value found under a path-named key; false if it is not a string or list of
// strings (then the value is scanned like any other).
func (s *argScanner) addNamed(v any, name string, acc Access) bool {
	switch t := v.(type) {
	case string:
		s.add(name, t, acc)
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
			s.add(fmt.Sprintf("%s[%d]", name, i), x.(string), acc)
		}
		return true
	}
	return false
}

// filePath is a path argument's value as a path: a file URL becomes its path.
type filePath struct {
	path string
	alt  string // the undecoded spelling when percent-decoding changed the path
}

// filePathOf turns a file: URL into the path it names (RFC 8089: file:/abs, file:///abs,
// file://localhost/abs, any case); other values are returned as they are. Anything ambiguous
// (another host, a relative or opaque form, a query or fragment, an encoded NUL) is an error.
func filePathOf(s string) (filePath, error) {
	if !isFileURL(s) {
		return filePath{path: s}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return filePath{}, fmt.Errorf("cannot read the file URL %q: %w", s, err)
	}
	switch {
	case u.Opaque != "":
		return filePath{}, fmt.Errorf("the file URL %q has no absolute path", s)
	case u.Host != "" && !strings.EqualFold(u.Host, "localhost"):
		return filePath{}, fmt.Errorf("the file URL %q names another host (%s)", s, u.Host)
	case u.User != nil || u.Port() != "":
		return filePath{}, fmt.Errorf("the file URL %q has a user or port", s)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		return filePath{}, fmt.Errorf("the file URL %q has a query or fragment: which file it names depends on the server", s)
	case !strings.HasPrefix(u.Path, "/"):
		return filePath{}, fmt.Errorf("the file URL %q has no absolute path", s)
	case strings.IndexByte(u.Path, 0) >= 0:
		return filePath{}, fmt.Errorf("the file URL %q contains a NUL byte", s)
	}
	fp := filePath{path: u.Path}
	if raw := u.EscapedPath(); strings.Contains(raw, "%") {
		// The literal spelling too: a server that does not decode opens that name.
		if i := strings.Index(s, "/"); i >= 0 {
			lit := s[i:]
			if u.Host != "" {
				lit = strings.TrimPrefix(strings.TrimPrefix(lit, "//"), u.Host)
			} else {
				lit = "/" + strings.TrimLeft(lit, "/")
			}
			if lit != fp.path {
				fp.alt = lit
			}
		}
	}
	return fp, nil
}
