package filesystem

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// Schema helpers.
func obj(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	} else {
		s["required"] = []string{}
	}
	return s
}
func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}
func integer(desc string) map[string]any {
	return map[string]any{"type": "integer", "description": desc}
}
func strList(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
}

// toolDecl declares one built-in tool, once: its name, path arguments and flags (what the
// permission engine knows, see Table), its description and JSON schema (what the model sees), and
// its handler.
type toolDecl struct {
	declared
	Description string
	Schema      map[string]any
	run         func(t *Toolset, ctx context.Context, c *call) (any, error)
}

// declared is what a tool does: its permission-engine declaration, and whether its writes only
// add (see onlyAdds). The MCP annotations of `mcp serve` follow from it (readOnly, destructive).
type declared struct {
	toolargs.Tool
	additive bool
}

// readOnly: the tool never changes anything: it writes and deletes no path argument and runs no
// command (MCP's readOnlyHint).
func (d declared) readOnly() bool { return !d.Tool.Destructive() && !d.Command }

// destructive: the tool may overwrite or remove what exists (MCP's destructiveHint): every tool
// that changes something, unless it is declared to only add.
func (d declared) destructive() bool { return !d.readOnly() && !d.additive }

// onlyAdds declares a writing tool that never replaces or removes anything (not destructive).
func onlyAdds(d declared) declared {
	d.additive = true
	return d
}

// pathDesc describes every path property.
const pathDesc = "Absolute path, or relative to your workspace."

func readArg(name string) toolargs.Arg   { return toolargs.Arg{Name: name, Access: toolargs.Read} }
func writeArg(name string) toolargs.Arg  { return toolargs.Arg{Name: name, Access: toolargs.Write} }
func deleteArg(name string) toolargs.Arg { return toolargs.Arg{Name: name, Access: toolargs.Delete} }

// builtins declares massgen's own tools, in the order they are offered. Names and argument names
// follow the reference MCP filesystem server and MassGen's workspace tools: models and configs
// rely on them.
func builtins() []toolDecl {
	tool := func(name string, args ...toolargs.Arg) declared {
		return declared{Tool: toolargs.Tool{Name: name, Args: args}}
	}
	return []toolDecl{
		{tool("read_file", readArg("path")),
			"Read the complete contents of a text file. Refuses binary files (images, audio, video, archives, executables, office documents). Optional head/tail return only the first/last N lines.",
			obj([]string{"path"}, map[string]any{"path": str(pathDesc), "head": integer("Only the first N lines."), "tail": integer("Only the last N lines.")}),
			(*Toolset).readFile},
		{declared{Tool: toolargs.Tool{Name: "read_multiple_files", Args: []toolargs.Arg{{Name: "paths", List: true}}}},
			fmt.Sprintf("Read several text files at once. A file that cannot be read gets an error entry; the others are still returned. Each file is returned once (a path named again is counted in duplicates). One call returns at most %s of content: the files past it are not read, and truncated, note and not_read say which; read those in another call.", sizeText(maxReadTotal)),
			obj([]string{"paths"}, map[string]any{"paths": strList("Paths to read.")}),
			(*Toolset).readMultipleFiles},
		{tool("write_file", writeArg("path")),
			"Create a new file or completely overwrite an existing one with the given content (written atomically). Parent directories are created.",
			obj([]string{"path", "content"}, map[string]any{"path": str(pathDesc), "content": str("The full new content.")}),
			(*Toolset).writeFile},
		{tool("edit_file", toolargs.Arg{Name: "path", Access: toolargs.Write, ReadIf: "dryRun"}),
			"Make line-based edits to a text file: each edit replaces oldText (exact match, or the same lines ignoring indentation) with newText. Returns a unified diff of the change. With dryRun the diff is returned and nothing is written.",
			obj([]string{"path", "edits"}, map[string]any{
				"path": str(pathDesc),
				"edits": map[string]any{"type": "array", "description": "Edits applied in order.", "items": obj([]string{"oldText", "newText"}, map[string]any{
					"oldText": str("Text to search for (must match exactly, or line by line ignoring indentation)."),
					"newText": str("Text to replace it with."),
				})},
				"dryRun": boolean("Preview the diff without writing."),
			}),
			(*Toolset).editFile},
		{onlyAdds(tool("create_directory", writeArg("path"))),
			"Create a directory (and its parents). Succeeds silently if it already exists.",
			obj([]string{"path"}, map[string]any{"path": str(pathDesc)}),
			(*Toolset).createDirectory},
		{tool("list_directory", readArg("path")),
			"List the entries of a directory you may read, each marked [DIR], [FILE] or [LINK]. Entries you may not read are not shown.",
			obj([]string{"path"}, map[string]any{"path": str(pathDesc)}),
			(*Toolset).listDirectory},
		{tool("directory_tree", readArg("path")),
			fmt.Sprintf("Recursive tree of a directory as JSON: entries with name, type and children. Entries you may not read are not shown. At most %d entries (and %s of names) per call: past that, truncated is true and note says how many more there are.", maxTreeItems, sizeText(maxTreeBytes)),
			obj([]string{"path"}, map[string]any{"path": str(pathDesc)}),
			(*Toolset).directoryTree},
		{tool("move_file", deleteArg("source"), writeArg("destination")),
			"Move or rename a file or directory. Fails if the destination exists.",
			obj([]string{"source", "destination"}, map[string]any{"source": str(pathDesc), "destination": str(pathDesc)}),
			(*Toolset).moveFile},
		{tool("search_files", readArg("path")),
			fmt.Sprintf("Recursively search for files and directories under path whose name matches pattern (a glob such as **/*.go, or a case-insensitive substring of the name). excludePatterns are globs to skip. At most %d matches (and %s of paths) per call: past that, truncated is true and note says how many more there are.", maxSearchHits, sizeText(maxSearchBytes)),
			obj([]string{"path", "pattern"}, map[string]any{"path": str(pathDesc), "pattern": str("Glob or name substring."), "excludePatterns": strList("Globs to exclude.")}),
			(*Toolset).searchFiles},
		{tool("get_file_info", readArg("path")),
			"Metadata of a file or directory: size, times, type, permissions.",
			obj([]string{"path"}, map[string]any{"path": str(pathDesc)}),
			(*Toolset).getFileInfo},
		{tool("list_allowed_directories"),
			"List the directories (and single files) you may read, and those you may write.",
			obj(nil, map[string]any{}),
			(*Toolset).listAllowed},
		{tool("copy_file", readArg("source_path"), writeArg("destination_path")),
			"Copy a file or a directory (recursively) to destination_path. Parent directories are created. Use this to deliver files from your workspace (or other agents' shared workspaces) to a writable context path.",
			obj([]string{"source_path", "destination_path"}, map[string]any{
				"source_path": str(pathDesc), "destination_path": str(pathDesc), "overwrite": boolean("Replace an existing destination (default false)."),
			}),
			(*Toolset).copyFile},
		{tool("copy_files_batch", readArg("source_base_path"), writeArg("destination_base_path")),
			"Copy every file under source_base_path that matches include_patterns (default: all) and no exclude_patterns to the same relative place under destination_base_path. Returns copied, skipped (with reason) and errors.",
			obj([]string{"source_base_path", "destination_base_path"}, map[string]any{
				"source_base_path": str(pathDesc), "destination_base_path": str(pathDesc),
				"include_patterns": strList("Globs on the path relative to source_base_path (default [\"*\"]: everything)."),
				"exclude_patterns": strList("Globs to skip."),
				"overwrite":        boolean("Replace existing files (default false)."),
			}),
			(*Toolset).copyFilesBatch},
		{tool("delete_file", deleteArg("path")),
			"Delete a file, or a directory with recursive=true. You may only delete files you read or created in this run; workspace and context-path roots and system paths (.git, .env, node_modules, ...) are never deleted. Files deleted from a context path go to the trash and can be restored by the user.",
			obj([]string{"path"}, map[string]any{"path": str(pathDesc), "recursive": boolean("Required to delete a directory.")}),
			(*Toolset).deleteFile},
		// The base path is written (files below it are deleted, each judged on its own); the
		// base itself stays.
		{tool("delete_files_batch", writeArg("base_path")),
			"Delete every file under base_path matching include_patterns (default: all) and no exclude_patterns. Returns deleted, skipped (with reason: unread, protected, system path...) and errors. dry_run lists what would be deleted.",
			obj([]string{"base_path"}, map[string]any{
				"base_path":        str(pathDesc),
				"include_patterns": strList("Globs on the path relative to base_path (default [\"*\"])."),
				"exclude_patterns": strList("Globs to keep."),
				"dry_run":          boolean("Only report what would be deleted."),
			}),
			(*Toolset).deleteFilesBatch},
		{tool("compare_directories", readArg("dir1"), readArg("dir2")),
			"Compare two directories recursively: files only in dir1, only in dir2, different, identical; with show_content_diff, unified diffs of differing text files.",
			obj([]string{"dir1", "dir2"}, map[string]any{"dir1": str(pathDesc), "dir2": str(pathDesc), "show_content_diff": boolean("Include unified diffs.")}),
			(*Toolset).compareDirectories},
		{tool("compare_files", readArg("file1"), readArg("file2")),
			"Compare two text files: unified diff and added/removed line counts. Binary files are reported as such, not diffed.",
			obj([]string{"file1", "file2"}, map[string]any{"file1": str(pathDesc), "file2": str(pathDesc), "context_lines": integer("Context lines around changes (default 3).")}),
			(*Toolset).compareFiles},
		// The command's own paths are analysed from its words; it is cancelled with the run.
		{declared{Tool: toolargs.Tool{Name: "execute_command", Args: []toolargs.Arg{{Name: "work_dir", Optional: true}}, Command: true, Cancellable: true}},
			"Run a shell command (/bin/sh -c) in a kernel sandbox: it can read what you may read plus system directories and write only where you may write. Returns exit_code, stdout, stderr (capped; truncated says so). timeout in seconds (default 60, max 600).",
			obj([]string{"command"}, map[string]any{"command": str("Shell command."), "work_dir": str("Working directory (default: your workspace)."), "timeout": integer("Seconds before the command and everything it started are killed.")}),
			(*Toolset).executeCommand},
	}
}

// Table is what the permission engine knows about massgen's built-in tools: their path
// arguments with their access, and their flags. Give it to permissions.Spec.Tools.
func Table() toolargs.Table {
	decls := builtins()
	tools := make([]toolargs.Tool, len(decls))
	for i, d := range decls {
		tools[i] = d.Tool
	}
	return toolargs.NewTable(tools...)
}

// IsBuiltin reports whether name is one of massgen's own tools (not an MCP server's).
func IsBuiltin(name string) bool {
	for _, d := range builtins() {
		if d.Name == name {
			return true
		}
	}
	return false
}

// Argument helpers. Models are sloppy with types, so they accept what is unambiguous.

func (c *call) str(name string, required bool) (string, error) {
	v, ok := c.args[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("missing argument %q", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string, got %T", name, v)
	}
	if required && strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("argument %q is empty", name)
	}
	return s, nil
}

func (c *call) boolean(name string) (bool, error) {
	switch v := c.args[name].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(v) {
		case "true", "yes", "1":
			return true, nil
		case "false", "no", "0", "":
			return false, nil
		}
	}
	return false, fmt.Errorf("argument %q must be a boolean, got %v", name, c.args[name])
}

func (c *call) integer(name string, def int) (int, error) {
	switch v := c.args[name].(type) {
	case nil:
		return def, nil
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1e9 {
			return 0, fmt.Errorf("argument %q must be an integer, got %v", name, v)
		}
		return int(v), nil
	case string:
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("argument %q must be an integer, got %v", name, c.args[name])
}

// patterns reads the optional include_patterns (default ["*"]: everything) and exclude_patterns
// of the batch tools.
func (c *call) patterns() (include, exclude []string, err error) {
	if include, err = c.strList("include_patterns", false); err != nil {
		return nil, nil, err
	}
	if exclude, err = c.strList("exclude_patterns", false); err != nil {
		return nil, nil, err
	}
	if len(include) == 0 {
		include = []string{"*"}
	}
	return include, exclude, nil
}

func (c *call) strList(name string, required bool) ([]string, error) {
	switch v := c.args[name].(type) {
	case nil:
		if required {
			return nil, fmt.Errorf("missing argument %q", name)
		}
		return nil, nil
	case string: // a single path/pattern given as a string
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("argument %s[%d] must be a string, got %T", name, i, e)
			}
			out = append(out, s)
		}
		if required && len(out) == 0 {
			return nil, fmt.Errorf("argument %q is empty", name)
		}
		return out, nil
	}
	return nil, fmt.Errorf("argument %q must be a list of strings, got %T", name, c.args[name])
}
