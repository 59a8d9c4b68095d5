package configs

import (
	"errors"
	"path/filepath"
	"testing"
)

// FuzzLoadBytes: any input either loads (every path absolute) or fails with a
// *ValidationError; it never panics.
func FuzzLoadBytes(f *testing.F) {
	for _, n := range []string{"basic/single/single_agent", "tools/filesystem/gemini_gpt5nano_protected_paths"} {
		data, err := Example(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("agent: {id: a, backend: {type: openai, cwd: ws}}\norchestrator: {context_paths: [{path: ., protected_paths: [x]}]}\n"))
	f.Add([]byte("agents:\n  - id: a\n    backend:\n      type: openai\n     model: x\n"))
	f.Add([]byte("a: &x [*x]\n"))
	// Aliases nested in aliases under an untyped section: refused, not expanded.
	f.Add([]byte("agent: {id: a, backend: {type: openai, model: m}}\norchestrator: {coordination: {b: {" +
		"l0: &l0 [x, x, x, x, x, x, x, x, x], l1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0], " +
		"l2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1], l3: &l3 [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2], " +
		"l4: &l4 [*l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3], l5: &l5 [*l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4], " +
		"l6: &l6 [*l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5]}}}\n"))
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, err := LoadBytes("fuzz.yaml", data, LoadOptions{BaseDir: base})
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error is %T, not *ValidationError: %v", err, err)
			}
			return
		}
		for _, a := range cfg.Agents {
			if a.Backend.CWD != "" && !filepath.IsAbs(a.Backend.CWD) {
				t.Fatalf("cwd %q not absolute", a.Backend.CWD)
			}
		}
		for _, p := range []string{cfg.Orchestrator.SnapshotStorage, cfg.Orchestrator.AgentTemporaryWorkspace, cfg.Orchestrator.SessionStorage} {
			if !filepath.IsAbs(p) {
				t.Fatalf("state path %q not absolute", p)
			}
		}
		for _, cp := range cfg.Orchestrator.ContextPaths {
			for _, pp := range cp.ProtectedPaths {
				if !within(cp.Path, pp) {
					t.Fatalf("protected %q outside %q", pp, cp.Path)
				}
			}
		}
	})
}
