package configs

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// MassGen's custom_tools entries may name a function without path:: one of the functions MassGen
// ships in its Python package (massgen/tool/, e.g. two_num_tool). massgen finds them in the
// MassGen checkout that holds the config file, searching in the order MassGen's ToolManager does
// (_load_builtin_function): these packages first, then every other file of massgen/tool.
var builtinToolPackages = []string{"_basic", "_code_executors", "_file_handlers", "_multimedia_processors", "workflow_toolkits"}

// resolveBuiltinTools gives every custom_tools entry without path: the file of MassGen's tool
// folder that defines its functions, when the config file (origin) lies in a MassGen checkout.
// An entry it cannot resolve keeps an empty path and says why (expandCustomTool reports it).
func (c *Config) resolveBuiltinTools(origin string) {
	var toolDir string
	var looked bool
	for i := range c.Agents {
		for j := range c.Agents[i].Backend.CustomTools {
			t := &c.Agents[i].Backend.CustomTools[j]
			if strings.TrimSpace(t.Path) != "" || len(t.Function) == 0 {
				continue
			}
			if !looked {
				toolDir, looked = massgenToolDir(origin), true
			}
			t.Path, t.builtinProblem = builtinToolFile(toolDir, origin, t.Function)
		}
	}
}

// massgenToolDir returns massgen/tool of the MassGen checkout holding the config file origin (the
// nearest folder above it named massgen that has a tool/ package, or that holds massgen/tool/),
// or "" when there is none.
func massgenToolDir(origin string) string {
	if strings.HasPrefix(origin, "@") || !filepath.IsAbs(origin) {
		return ""
	}
	isPackage := func(dir string) bool {
		fi, err := os.Stat(filepath.Join(dir, "__init__.py"))
		return err == nil && fi.Mode().IsRegular()
	}
	for dir := filepath.Dir(origin); ; dir = filepath.Dir(dir) {
		if filepath.Base(dir) == "massgen" && isPackage(filepath.Join(dir, "tool")) {
			return filepath.Join(dir, "tool")
		}
		if isPackage(filepath.Join(dir, "massgen", "tool")) {
			return filepath.Join(dir, "massgen", "tool")
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// builtinToolFile returns the .py file of toolDir that defines every function of fns, or a
// message saying which function is missing and where it was looked up.
func builtinToolFile(toolDir, origin string, fns []string) (string, string) {
	names := strings.Join(fns, ", ")
	if toolDir == "" {
		where := "the built-in configs are not"
		if !strings.HasPrefix(origin, "@") {
			where = origin + " is not"
		}
		return "", fmt.Sprintf("missing path: %s would be one of MassGen's built-in tool functions, which massgen finds in massgen/tool/ of the MassGen checkout holding the config, but %s in one (no massgen/tool/ package above it); run the config from a MassGen checkout, or copy the function into a .py file and name it in path:", names, where)
	}
	files := builtinSearchOrder(toolDir)
	file := ""
	for _, fn := range fns {
		found := ""
		def := regexp.MustCompile(`(?m)^(?:async[ \t]+)?def[ \t]+` + regexp.QuoteMeta(fn) + `[ \t]*\(`)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err == nil && bytes.Contains(data, []byte(fn)) && def.Match(data) {
				found = f
				break
			}
		}
		switch {
		case found == "":
			return "", fmt.Sprintf("%s is not one of MassGen's built-in tool functions: no file of %s defines it (looked in %s, then every other file there, as MassGen does); check the name, or name the file that defines it in path:", fn, toolDir, strings.Join(builtinToolPackages, ", "))
		case file != "" && found != file:
			return "", fmt.Sprintf("the built-in tool functions %s are defined in different files (%s, %s); give each its own custom_tools entry", names, file, found)
		}
		file = found
	}
	return file, ""
}

// builtinSearchOrder lists the .py files of toolDir in MassGen's search order: the packages of
// builtinToolPackages, then every other file, each group in lexical order. Links are not followed.
func builtinSearchOrder(toolDir string) []string {
	var first, rest []string
	_ = filepath.WalkDir(toolDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() || filepath.Ext(p) != ".py" {
			return nil
		}
		rel, _ := filepath.Rel(toolDir, p)
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if slices.Contains(builtinToolPackages, strings.TrimSuffix(top, ".py")) {
			first = append(first, p)
		} else {
			rest = append(rest, p)
		}
		return nil
	})
	slices.SortStableFunc(first, func(a, b string) int {
		ia := slices.IndexFunc(builtinToolPackages, func(pkg string) bool { return strings.HasPrefix(a, filepath.Join(toolDir, pkg)) })
		ib := slices.IndexFunc(builtinToolPackages, func(pkg string) bool { return strings.HasPrefix(b, filepath.Join(toolDir, pkg)) })
		return ia - ib
	})
	return append(first, rest...)
}
