package filesystem

import (
	"context"
	"fmt"
	"math"
	"strings"
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

// builtinNames are our own tools, in the order they are offered.
var builtinNames = [...]string{"read_file", "read_multiple_files", "write_file", "edit_file", "create_directory",
	"list_directory", "directory_tree", "move_file", "search_files", "get_file_info", "list_allowed_directories",
	"copy_file", "copy_files_batch", "delete_file", "delete_files_batch", "compare_directories", "compare_files",
	"execute_command"}

// IsBuiltin reports whether name is one of massgen's own tools (not an MCP server's).
func IsBuiltin(name string) bool {
	for _, n := range builtinNames {
		if n == name {
			return true
		}
	}
	return false
}

// register defines the built-in tools. Names and argument names follow the reference MCP
// filesystem server and MassGen's workspace tools: models and configs rely on them.
func (t *Toolset) register() {
	t.builtin = map[string]*toolDef{}
	def := func(name, desc string, write bool, params map[string]any, run func(context.Context, *call) (any, error)) {
		t.builtin[name] = &toolDef{Tool: Tool{Name: name, Description: desc, Parameters: params, Write: write}, run: run}
		t.order = append(t.order, name)
	}
	pathDesc := "Absolute path, or relative to your workspace."
	def("read_file", "Read the complete contents of a text file. Refuses binary files (images, audio, video, archives, executables, office documents). Optional head/tail return only the first/last N lines.",
		false, obj([]string{"path"}, map[string]any{"path": str(pathDesc), "head": integer("Only the first N lines."), "tail": integer("Only the last N lines.")}), t.readFile)
	def("read_multiple_files", "Read several text files at once. A file that cannot be read gets an error entry; the others are still returned.",
		false, obj([]string{"paths"}, map[string]any{"paths": strList("Paths to read.")}), t.readMultipleFiles)
	def("write_file", "Create a new file or completely overwrite an existing one with the given content (written atomically). Parent directories are created.",
		true, obj([]string{"path", "content"}, map[string]any{"path": str(pathDesc), "content": str("The full new content.")}), t.writeFile)
	def("edit_file", "Make line-based edits to a text file: each edit replaces oldText (exact match, or the same lines ignoring indentation) with newText. Returns a unified diff of the change. With dryRun the diff is returned and nothing is written.",
		true, obj([]string{"path", "edits"}, map[string]any{
			"path": str(pathDesc),
			"edits": map[string]any{"type": "array", "description": "Edits applied in order.", "items": obj([]string{"oldText", "newText"}, map[string]any{
				"oldText": str("Text to search for (must match exactly, or line by line ignoring indentation)."),
				"newText": str("Text to replace it with."),
			})},
			"dryRun": boolean("Preview the diff without writing."),
		}), t.editFile)
	def("create_directory", "Create a directory (and its parents). Succeeds silently if it already exists.",
		true, obj([]string{"path"}, map[string]any{"path": str(pathDesc)}), t.createDirectory)
	def("list_directory", "List the entries of a directory, each marked [DIR] or [FILE].",
		false, obj([]string{"path"}, map[string]any{"path": str(pathDesc)}), t.listDirectory)
	def("directory_tree", "Recursive tree of a directory as JSON: entries with name, type and children.",
		false, obj([]string{"path"}, map[string]any{"path": str(pathDesc)}), t.directoryTree)
	def("move_file", "Move or rename a file or directory. Fails if the destination exists.",
		true, obj([]string{"source", "destination"}, map[string]any{"source": str(pathDesc), "destination": str(pathDesc)}), t.moveFile)
	def("search_files", "Recursively search for files and directories under path whose name matches pattern (a glob such as **/*.go, or a case-insensitive substring of the name). excludePatterns are globs to skip.",
		false, obj([]string{"path", "pattern"}, map[string]any{"path": str(pathDesc), "pattern": str("Glob or name substring."), "excludePatterns": strList("Globs to exclude.")}), t.searchFiles)
	def("get_file_info", "Metadata of a file or directory: size, times, type, permissions.",
		false, obj([]string{"path"}, map[string]any{"path": str(pathDesc)}), t.getFileInfo)
	def("list_allowed_directories", "List the directories (and single files) you may read, and those you may write.",
		false, obj(nil, map[string]any{}), t.listAllowed)
	def("copy_file", "Copy a file or a directory (recursively) to destination_path. Parent directories are created. Use this to deliver files from your workspace (or other agents' shared workspaces) to a writable context path.",
		true, obj([]string{"source_path", "destination_path"}, map[string]any{
			"source_path": str(pathDesc), "destination_path": str(pathDesc), "overwrite": boolean("Replace an existing destination (default false)."),
		}), t.copyFile)
	def("copy_files_batch", "Copy every file under source_base_path that matches include_patterns (default: all) and no exclude_patterns to the same relative place under destination_base_path. Returns copied, skipped (with reason) and errors.",
		true, obj([]string{"source_base_path", "destination_base_path"}, map[string]any{
			"source_base_path": str(pathDesc), "destination_base_path": str(pathDesc),
			"include_patterns": strList("Globs on the path relative to source_base_path (default [\"*\"]: everything)."),
			"exclude_patterns": strList("Globs to skip."),
			"overwrite":        boolean("Replace existing files (default false)."),
		}), t.copyFilesBatch)
	def("delete_file", "Delete a file, or a directory with recursive=true. You may only delete files you read or created in this run; workspace and context-path roots and system paths (.git, .env, node_modules, ...) are never deleted. Files deleted from a context path go to the trash and can be restored by the user.",
		true, obj([]string{"path"}, map[string]any{"path": str(pathDesc), "recursive": boolean("Required to delete a directory.")}), t.deleteFile)
	def("delete_files_batch", "Delete every file under base_path matching include_patterns (default: all) and no exclude_patterns. Returns deleted, skipped (with reason: unread, protected, system path...) and errors. dry_run lists what would be deleted.",
		true, obj([]string{"base_path"}, map[string]any{
			"base_path":        str(pathDesc),
			"include_patterns": strList("Globs on the path relative to base_path (default [\"*\"])."),
			"exclude_patterns": strList("Globs to keep."),
			"dry_run":          boolean("Only report what would be deleted."),
		}), t.deleteFilesBatch)
	def("compare_directories", "Compare two directories recursively: files only in dir1, only in dir2, different, identical; with show_content_diff, unified diffs of differing text files.",
		false, obj([]string{"dir1", "dir2"}, map[string]any{"dir1": str(pathDesc), "dir2": str(pathDesc), "show_content_diff": boolean("Include unified diffs.")}), t.compareDirectories)
	def("compare_files", "Compare two text files: unified diff and added/removed line counts. Binary files are reported as such, not diffed.",
		false, obj([]string{"file1", "file2"}, map[string]any{"file1": str(pathDesc), "file2": str(pathDesc), "context_lines": integer("Context lines around changes (default 3).")}), t.compareFiles)
	def("execute_command", "Run a shell command (/bin/sh -c) in a kernel sandbox: it can read what you may read plus system directories and write only where you may write. Returns exit_code, stdout, stderr (capped; truncated says so). timeout in seconds (default 60, max 600).",
		false, obj([]string{"command"}, map[string]any{"command": str("Shell command."), "work_dir": str("Working directory (default: your workspace)."), "timeout": integer("Seconds before the command and everything it started are killed.")}), t.executeCommand)
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
