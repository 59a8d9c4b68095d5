package permissions

import "testing"

// TestCaseInsensitiveNames runs the darwin/windows case rule on Linux: a protected path, a
// directory holding one and a managed root are matched whatever the case the caller writes.
func TestCaseInsensitiveNames(t *testing.T) {
	tr := newTree(t)
	spec := tr.spec(Final)
	spec.ContextPaths = []ContextPath{{Path: tr.p("project"), Write: true, Protected: []string{tr.p("project/golden"), tr.p("project/src/main.go")}}}
	cases := []struct {
		name, tool string
		args       map[string]any
		rule       Rule // the deny rule under the case-insensitive rule
	}{
		{"protected, other case", "write_file", map[string]any{"path": tr.p("project/GOLDEN/new.json"), "content": "x"}, RuleProtected},
		{"protected, mixed case", "write_file", map[string]any{"path": tr.p("project/Golden"), "content": "x"}, RuleProtected},
		{"excluded name, other case", "write_file", map[string]any{"path": tr.p("project/.GIT/config"), "content": "x"}, RuleDefaultExcluded},
	}
	for _, fold := range []bool{false, true} {
		p, err := newPolicyFold(spec, osFS{}, fold)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			d := p.Decide(Request{Tool: c.tool, Args: c.args})
			switch {
			case fold && (d.Allow || d.Rule != c.rule):
				t.Errorf("fold: %s: got allow=%v rule=%s, want denied by %s (%s)", c.name, d.Allow, d.Rule, c.rule, d.Reason)
			case !fold && c.rule == RuleProtected && !d.Allow:
				t.Errorf("case-sensitive: %s: a different name is not protected, got denied: %s", c.name, d.Reason)
			}
		}
		// Removing, spelt in another case, a managed root or a directory holding a protected
		// path is refused as a whole.
		for _, q := range []struct {
			path string
			rule Rule
		}{{tr.root + "/PROJECT", RuleManagedRoot}, {tr.root + "/project/SRC", RuleContainsReadOnly}} {
			d := p.checkRemoval(Decision{Allow: true, Path: q.path, Access: Delete})
			if fold && (d.Allow || d.Rule != q.rule) {
				t.Errorf("fold: removing %s: allow=%v rule=%s, want denied by %s", q.path, d.Allow, d.Rule, q.rule)
			}
			if !fold && !d.Allow {
				t.Errorf("case-sensitive: removing %s refused: %s", q.path, d.Reason)
			}
		}
	}
	if got := foldIndex(map[string]int{"/a/B": 1, "/A/b": 2}, unixPaths.foldKey); got["/a/b"] != "/A/b" {
		t.Errorf("foldIndex: %v, want the first key in order", got)
	}
}
