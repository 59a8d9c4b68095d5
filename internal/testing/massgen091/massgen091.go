// Package massgen091 gives tests MassGen 0.1.91's configs (../shared/massgen-0.1.91 beside the
// checkout) and the one list of reasons a config may fail for that are not massgen's: what this
// machine lacks (a Python module, a program, an API key), what massgen refuses by design, and
// what MassGen ships broken on purpose. The validation test (cmd/configscmd) and the run test
// (orchestrator) both classify by it.
package massgen091

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Root finds shared/massgen-0.1.91 above the working directory, or $MASSGEN_091_DIR; it skips
// the test, saying so, when there is none.
func Root(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("MASSGEN_091_DIR"); d != "" {
		return d
	}
	dir, _ := filepath.Abs(".")
	for ; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "massgen-0.1.91")
		if fi, err := os.Stat(filepath.Join(p, "massgen", "configs")); err == nil && fi.IsDir() {
			return p
		}
		if filepath.Dir(dir) == dir {
			t.Skip("shared/massgen-0.1.91 not found above the checkout (set MASSGEN_091_DIR): MassGen 0.1.91's configs are not checked")
		}
	}
}

// Files lists every YAML file under root/massgen/configs, sorted.
func Files(t testing.TB, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "massgen", "configs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 200 {
		t.Fatalf("only %d configs under %s", len(files), root)
	}
	slices.Sort(files)
	return files
}

// A Reason is a kind of failure that is not massgen's.
type Reason struct {
	Kind string
	re   *regexp.Regexp
	// only restricts the reason to files whose path matches (nil: any file).
	only *regexp.Regexp
}

// Reasons are the failures that are not massgen's, by the message that says so.
var Reasons = []Reason{
	{Kind: "Python module not installed", re: regexp.MustCompile(`imports the Python module \S+, which is not installed|imports massgen\.\S+, a module of MassGen's Python package, which is not installed`)},
	{Kind: "program not on PATH", re: regexp.MustCompile("needs `\\S+` on PATH \\(not found\\)|command \"\\S+\" is not on PATH|need python3, which is not on PATH")},
	{Kind: "API key not set", re: regexp.MustCompile(`no API key: set \S+`)},
	// AG2 configs run Python agents inside MassGen's process: they need the ag2 package and
	// MassGen itself; massgen refuses the type (configs/keytable.go).
	{Kind: "a Python framework adapter (AG2)", re: regexp.MustCompile(`refused: AG2 is a Python framework adapter`)},
	// Issue 25: Copilot and Antigravity are refused, naming the CLI agents massgen drives.
	{Kind: "a coding-agent CLI massgen does not drive", re: regexp.MustCompile(`refused: massgen does not drive .*Coding-agent CLIs massgen drives`)},
	// MassGen ships these to show a wrong function name: the error names it and where it was looked up.
	{Kind: "a wrong function name on purpose", re: regexp.MustCompile(`is not one of MassGen's built-in tool functions: no file of .* defines it`),
		only: regexp.MustCompile(`wrong_custom_tool`)},
	// The copy holds MassGen's configs and tool folder only: context paths naming its sources,
	// docs or large media are missing (validate warns; a run refuses).
	{Kind: "a context path this copy of MassGen lacks", re: regexp.MustCompile(`Context paths not found`)},
	// MassGen's rate-limit table lies among its configs; it is no config.
	{Kind: "not a config", re: regexp.MustCompile(`no agents: add`), only: regexp.MustCompile(`rate_limits/rate_limits\.yaml$`)},
}

// IsConfig reports whether file is a config: MassGen's rate-limit table lies among them.
func IsConfig(file string) bool {
	return !strings.HasSuffix(filepath.ToSlash(file), "rate_limits/rate_limits.yaml")
}

// Pending backend types the CLI-agent work of issue 25 adds (backends/): until the build knows
// them, a config naming one fails with "unknown backend". known says whether it does.
var Pending = []string{"codex", "gemini_cli"}

var unknownBackendRE = regexp.MustCompile(`unknown backend "([a-z_]+)"`)

// Classify says which reason a problem message of file is, or ok false when it is massgen's.
// knownType tells whether the build knows a backend type.
func Classify(file, msg string, knownType func(string) bool) (kind string, ok bool) {
	for _, r := range Reasons {
		if r.re.MatchString(msg) && (r.only == nil || r.only.MatchString(filepath.ToSlash(file))) {
			return r.Kind, true
		}
	}
	if m := unknownBackendRE.FindStringSubmatch(msg); m != nil && slices.Contains(Pending, m[1]) && !knownType(m[1]) {
		return "backend " + m[1] + " not in this build yet (issue 25, backends/)", true
	}
	return "", false
}
