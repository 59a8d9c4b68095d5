package toolargs

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode"
)

// Arg declares one path argument of a tool.
type Arg struct {
	Name     string
	Access   Access
	List     bool // a list of paths ("paths": [...])
	Optional bool
	// ReadIf names a boolean argument that makes this one a read when true (edit_file's dryRun
	// only shows the diff).
	ReadIf string
}

// Tool is what the permission engine knows about a tool: its path arguments and how it runs.
type Tool struct {
	Name string
	Args []Arg
	// Command: the tool runs its "command" argument with a shell, which is analysed for the
	// paths it touches (the other arguments stay declared above, e.g. work_dir).
	Command bool
	// Cancellable: stopping the run cancels the call (commands); otherwise the tool finishes
	// what it started (a file operation is never left half done).
	Cancellable bool
}

// Reads reports whether a call may read a path: an argument is read (or read when ReadIf holds).
func (t Tool) Reads() bool {
	for _, a := range t.Args {
		if a.Access == Read || a.ReadIf != "" {
			return true
		}
	}
	return false
}

// Destructive reports whether a call may change files: a path argument is written or deleted.
// Commands are not destructive by declaration: their writes are judged word by word.
func (t Tool) Destructive() bool {
	for _, a := range t.Args {
		if a.Access != Read {
			return true
		}
	}
	return false
}

// Table is a set of tool declarations by name. It is built once and passed explicitly (the
// permission engine gets massgen's built-in tools from the filesystem package's table).
type Table map[string]Tool

// NewTable indexes tools by name.
func NewTable(tools ...Tool) Table {
	t := make(Table, len(tools))
	for _, tl := range tools {
		t[tl.Name] = tl
	}
	return t
}

// mcpFilesystem are the tools of the reference MCP filesystem server
// (@modelcontextprotocol/server-filesystem), the one external server configs use most, that
// massgen's own tools do not share: their arguments are known rather than guessed, unprefixed or
// behind mcp__<server>__. massgen's tools take the reference server's names and arguments
// (read_file, write_file, move_file, ...): their one declaration, in the table the caller gives
// (filesystem.Table()), judges those calls, the server's included.
var mcpFilesystem = NewTable(
	Tool{Name: "read_text_file", Args: []Arg{{Name: "path"}}},
	Tool{Name: "read_media_file", Args: []Arg{{Name: "path"}}},
	Tool{Name: "list_directory_with_sizes", Args: []Arg{{Name: "path"}}},
)

// Known looks a tool up by its base name: the table first, then the reference MCP filesystem
// server's tools massgen's do not share.
func (tb Table) Known(tool string) (Tool, bool) {
	b := BaseToolName(tool)
	if t, ok := tb[b]; ok {
		return t, true
	}
	t, ok := mcpFilesystem[b]
	return t, ok
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

// IsWorkflow reports whether tool is a coordination tool (new_answer, vote). Only unprefixed
// names are: behind an mcp__<server>__ prefix a tool of that name is an unknown tool.
func IsWorkflow(tool string) bool { return workflowTools[tool] }

// shellNames are other runtimes' and MCP servers' tools that run shell commands, known by name
// because nobody declares them. massgen's own command tools are not here: their declarations
// say so (Tool.Command), and a table that declares them carries that (Table.IsCommand).
var shellNames = map[string]bool{
	"bash": true, "shell": true, "exec": true, "sh": true,
	"run_command": true, "run_shell_command": true, "execute_shell_command": true,
	"shell_exec": true, "exec_command": true, "terminal": true, "run_terminal_command": true,
	"execute_bash": true, "run_bash": true, "run_shell": true, "command": true,
}

// writeWords classify unknown tools by name (spec 001: write, edit, create, move, copy,
// delete, remove, plus a few obvious siblings).
var writeWords = []string{"write", "edit", "create", "move", "copy", "delete", "remove",
	"rename", "mkdir", "rmdir", "append", "patch", "save", "touch", "truncate", "unlink",
	"upload", "replace", "modify", "update", "put", "insert", "overwrite"}

// removeWords make an unknown tool's written paths deletions: it may remove or move them as a
// whole (a link goes, its target stays; what lies below a directory goes with it).
var removeWords = []string{"delete", "remove", "move", "rename"}

// fileWords make an unknown tool "file-related": with no path found it is refused.
var fileWords = map[string]bool{"file": true, "files": true, "dir": true, "dirs": true,
	"directory": true, "directories": true, "folder": true, "folders": true, "path": true,
	"paths": true, "fs": true, "filesystem": true, "notebook": true, "read": true, "write": true,
	"edit": true, "ls": true, "glob": true, "grep": true, "cat": true, "mkdir": true,
	"rmdir": true, "rm": true, "mv": true, "cp": true, "touch": true, "multiedit": true}

// BaseToolName strips every mcp__<server>__ prefix: mcp__fs__read_file -> read_file.
func BaseToolName(tool string) string {
	for IsMCPName(tool) {
		rest := tool[len(mcpPrefix):]
		i := strings.Index(rest, "__")
		if i < 0 || i+2 >= len(rest) {
			return tool
		}
		tool = rest[i+2:]
	}
	return tool
}

// IsShellName reports whether a tool nobody declares runs shell commands by its name: another
// runtime's or an MCP server's shell tool (bash, shell, run_command, ...), in any case. It knows
// no massgen tool: ask the table (Table.IsCommand) for those.
func IsShellName(tool string) bool {
	b := BaseToolName(tool)
	return shellNames[b] || shellNames[strings.ToLower(b)]
}

// IsCommand reports whether a call to tool runs shell commands: by the declaration the table (or
// the reference MCP filesystem server's list) holds for it; else, for a tool nobody declares,
// by its name: a command tool the table declares, named in another case (a server's
// EXECUTE_COMMAND is judged as a command, never as a tool that takes no command), or another
// runtime's shell tool (IsShellName).
func (tb Table) IsCommand(tool string) bool {
	if t, ok := tb.Known(tool); ok {
		return t.Command
	}
	b := BaseToolName(tool)
	for name, t := range tb {
		if t.Command && strings.EqualFold(name, b) {
			return true
		}
	}
	return IsShellName(b)
}

// IsWriteTool reports whether a tool not declared in a table may modify files (such tools are
// not offered to an agent that cannot write). Commands are not write tools: their writes are
// checked word by word.
func IsWriteTool(tool string) bool {
	if t, ok := Table(nil).Known(tool); ok {
		return t.Destructive()
	}
	b := BaseToolName(tool)
	if IsWorkflow(tool) || nativeNonFile[tool] || IsShellName(b) {
		return false
	}
	return nameHas(b, writeWords)
}

func nameHas(b string, words []string) bool {
	l := strings.ToLower(b)
	for _, w := range words {
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

// ErrNoPath is returned (wrapped) for file-related tools where no path could be found.
var ErrNoPath = errors.New("no path argument found")

// Call is what a tool call does to paths.
type Call struct {
	Paths []PathArg
	// Command is the shell command of a command tool (HasCommand); the caller analyses it.
	// WorkDir is where it runs ("" = the workspace).
	Command    string
	HasCommand bool
	WorkDir    string
}

// Classify finds every path argument of a call to tool and what the call does to it: by the
// table's declaration (or the reference MCP filesystem server's), else by heuristics on the
// tool's name and arguments. An error means the call cannot be judged and must be refused: a
// required argument missing or of the wrong type, a file-looking tool without a path.
func (tb Table) Classify(tool string, args map[string]any) (*Call, error) {
	if IsWorkflow(tool) {
		return &Call{}, nil
	}
	if decl, ok := tb.Known(tool); ok {
		return ClassifyDeclared(decl, tool, args)
	}
	return tb.classifyUnknown(tool, args)
}

// ClassifyDeclared classifies a call to a tool declared as decl. Behind an MCP prefix the server
// is not ours: undeclared arguments may be paths too, and are scanned.
func ClassifyDeclared(decl Tool, tool string, args map[string]any) (*Call, error) {
	c := &Call{}
	for _, d := range decl.Args {
		acc := d.Access
		if d.ReadIf != "" {
			if v, ok := args[d.ReadIf].(bool); ok && v {
				acc = Read
			}
		}
		v, present := args[d.Name]
		if !present || v == nil {
			if d.Optional {
				continue
			}
			return nil, fmt.Errorf("%s: missing required path argument %q", tool, d.Name)
		}
		if d.List {
			list, ok := v.([]any)
			if !ok {
				ss, ok2 := v.([]string)
				if !ok2 {
					return nil, fmt.Errorf("%s: argument %q must be a list of paths", tool, d.Name)
				}
				for _, s := range ss {
					list = append(list, s)
				}
			}
			if len(list) == 0 {
				return nil, fmt.Errorf("%s: argument %q is empty", tool, d.Name)
			}
			if len(list) > MaxArgPaths {
				return nil, fmt.Errorf("%s: more than %d path arguments to check", tool, MaxArgPaths)
			}
			for i, item := range list {
				s, ok := item.(string)
				if !ok {
					return nil, fmt.Errorf("%s: %s[%d] must be a string", tool, d.Name, i)
				}
				c.Paths = append(c.Paths, PathArg{Arg: fmt.Sprintf("%s[%d]", d.Name, i), Path: s, Access: acc})
			}
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: argument %q must be a string path", tool, d.Name)
		}
		c.Paths = append(c.Paths, PathArg{Arg: d.Name, Path: s, Access: acc})
	}
	if decl.Command {
		if err := c.addCommand(tool, args); err != nil {
			return nil, err
		}
	}
	if BaseToolName(tool) != tool {
		declared := map[string]bool{}
		for _, d := range decl.Args {
			declared[d.Name] = true
		}
		if decl.Command {
			declared["command"] = true
		}
		acc := Read
		if decl.Destructive() {
			acc = Write
		}
		if err := scanArgs(args, acc, declared, &c.Paths); err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
	}
	return c, nil
}

// classifyUnknown classifies a call to a tool the table does not declare, by heuristics on its
// name and arguments; a command tool by name (Table.IsCommand) has its command analysed.
func (tb Table) classifyUnknown(tool string, args map[string]any) (*Call, error) {
	b := BaseToolName(tool)
	c := &Call{}
	if nativeNonFile[tool] {
		return c, nil
	}
	if tb.IsCommand(b) {
		// Working directory arguments first.
		if err := scanArgs(args, Read, map[string]bool{"command": true, "cmd": true, "script": true, "commands": true}, &c.Paths); err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		if err := c.addCommand(tool, args); err != nil {
			return nil, err
		}
		return c, nil
	}
	acc := Read
	if nameHas(b, writeWords) || carriesContent(args) {
		acc = Write
	}
	if err := scanArgs(args, acc, nil, &c.Paths); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if strings.Contains(strings.ToLower(b), "copy") {
		// copy-like: sources are read, the rest written.
		for i := range c.Paths {
			if isSourceKey(c.Paths[i].Arg) {
				c.Paths[i].Access = Read
			}
		}
	}
	if nameHas(b, removeWords) {
		for i := range c.Paths {
			if c.Paths[i].Access == Write {
				c.Paths[i].Access = Delete
			}
		}
	}
	if len(c.Paths) == 0 && cwdDefault[tool] {
		// Claude Code's Grep and Glob search the working directory (the workspace) by default.
		c.Paths = append(c.Paths, PathArg{Arg: "path (default: workspace)", Path: "", Access: Read})
	}
	if len(c.Paths) == 0 && nameLooksFile(b) {
		return nil, fmt.Errorf("%s looks like a file tool but no path argument was found: %w", tool, ErrNoPath)
	}
	return c, nil
}

// addCommand takes the shell command and its working directory from a command tool's
// arguments; without a working directory argument the command runs in the workspace, which
// must then be readable.
func (c *Call) addCommand(tool string, args map[string]any) error {
	found := false
	for _, k := range []string{"command", "cmd", "script", "commands"} {
		v, ok := args[k]
		if !ok {
			continue
		}
		switch t := v.(type) {
		case string:
			c.Command, found = t, true
		case []any:
			parts := make([]string, 0, len(t))
			for _, x := range t {
				s, ok := x.(string)
				if !ok {
					return fmt.Errorf("%s: %q must be a string or a list of strings", tool, k)
				}
				parts = append(parts, shellQuote(s))
			}
			c.Command, found = strings.Join(parts, " "), true
		default:
			return fmt.Errorf("%s: %q must be a string", tool, k)
		}
		break
	}
	if !found {
		return fmt.Errorf("%s: missing the command argument", tool)
	}
	c.HasCommand = true
	for _, pa := range c.Paths {
		if isWorkDirKey(pa.Arg) {
			c.WorkDir = pa.Path
			return nil
		}
	}
	c.Paths = append(c.Paths, PathArg{Arg: DefaultWorkDirArg, Path: "", Access: Read})
	return nil
}

// DefaultWorkDirArg names the implicit working directory of a command (the workspace).
const DefaultWorkDirArg = "work_dir (default: workspace)"

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

// IsPathKey reports whether an argument name denotes a path (by the names tools use).
func IsPathKey(k string) bool {
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

// MaxArgPaths bounds the path arguments one call may carry: past it the call is refused rather
// than judged path by path (a decision must stay cheap whatever the model sends).
const MaxArgPaths = 4096

// looksLikePath: an absolute path, one starting with ~, ./, ../, a file: URL, or any value with
// a ".." component (sub/../../x climbs out as well as ../x does); Windows' forms too (C:\x, C:/x,
// \\server\share, \x, .\x, ~\x), whatever system massgen runs on: a server may run elsewhere,
// and on Windows they are the paths. Single line only.
func looksLikePath(s string) bool {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\r") {
		return false
	}
	return strings.HasPrefix(s, "/") || s == "~" || strings.HasPrefix(s, "~/") ||
		strings.HasPrefix(s, "./") || s == "." || hasDotDotComponent(s) || isFileURL(s) ||
		strings.HasPrefix(s, `\`) || strings.HasPrefix(s, `.\`) || strings.HasPrefix(s, `~\`) || isDrivePath(s)
}

// isDrivePath: a Windows drive letter, a colon and a separator (C:\x, d:/x).
func isDrivePath(s string) bool {
	return len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/') &&
		('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
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
	out *[]PathArg
	err error
}

// scanArgs scans args (skipping the top-level keys in skip); an error means a value cannot be
// judged (an ambiguous file URL, too many paths): the call is refused.
func scanArgs(args map[string]any, acc Access, skip map[string]bool, out *[]PathArg) error {
	s := &argScanner{out: out}
	s.scan(args, "", acc, skip)
	return s.err
}

func (s *argScanner) add(arg, val string, acc Access) {
	if s.err != nil {
		return
	}
	if len(*s.out) >= MaxArgPaths {
		s.err = fmt.Errorf("more than %d path arguments to check", MaxArgPaths)
		return
	}
	p, err := filePathOf(val)
	if err != nil {
		s.err = fmt.Errorf("argument %s: %w", arg, err)
		return
	}
	*s.out = append(*s.out, PathArg{Arg: arg, Path: p.path, Access: acc})
	if p.alt != "" {
		// A server may or may not decode the URL: both readings must pass.
		*s.out = append(*s.out, PathArg{Arg: arg + " (undecoded)", Path: p.alt, Access: acc})
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
			if IsPathKey(k) || destKeys[normKey(k)] {
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
