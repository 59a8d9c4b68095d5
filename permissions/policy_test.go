package permissions

import (
	"strings"
	"testing"
)

func TestCheckPathRules(t *testing.T) {
	tr := newTree(t)
	tests := []struct {
		name   string
		role   Role
		path   string
		access Access
		allow  bool
		rule   Rule
	}{
		// Workspace: read and write.
		{"workspace read", Coordination, "R/ws/a.txt", Read, true, "workspace"},
		{"workspace write", Coordination, "R/ws/new.txt", Write, true, "workspace"},
		{"relative path joins the workspace", Coordination, "sub/new.txt", Write, true, "workspace"},
		{"empty path is the workspace", Coordination, "", Read, true, "workspace"},
		{"excluded names are writable in the own workspace", Coordination, "R/ws/.git/config", Write, true, "workspace"},
		// Temp workspaces and read-only roots.
		{"temp workspace read", Coordination, "R/temp/agent1/answer.txt", Read, true, "temp-workspace"},
		{"temp workspace write", Final, "R/temp/agent1/answer.txt", Write, false, "read-only-temp-workspace"},
		{"read-only root read", Final, "R/prev/old.txt", Read, true, "read-only-path"},
		{"read-only root write", Final, "R/prev/old.txt", Write, false, "read-only-read-only-path"},
		// Context paths by role.
		{"coordination reads context", Coordination, "R/project/src/main.go", Read, true, "context-path"},
		{"coordination cannot write context", Coordination, "R/project/src/main.go", Write, false, "read-only-context-path"},
		{"final writes write-context", Final, "R/project/src/main.go", Write, true, "context-path"},
		{"final creates in write-context", Final, "R/project/src/new/deep/file.go", Write, true, "context-path"},
		// Protected paths (spec 001 example).
		{"protected dir", Final, "R/project/golden/test1.json", Write, false, "protected-path"},
		{"protected file", Final, "R/project/expected_output.txt", Write, false, "protected-path"},
		{"inside protected dir", Final, "R/project/golden/subdir/file.txt", Write, false, "protected-path"},
		{"protected readable", Final, "R/project/golden/test1.json", Read, true, "context-path"},
		{"unprotected sibling writable", Final, "R/project/new_test.py", Write, true, "context-path"},
		// Default excluded patterns.
		{".env read-only", Final, "R/project/.env", Write, false, "default-excluded"},
		{".git read-only", Final, "R/project/.git/HEAD", Write, false, "default-excluded"},
		{"node_modules read-only", Final, "R/project/node_modules/pkg/index.js", Write, false, "default-excluded"},
		{".massgen read-only", Final, "R/project/.massgen/x", Write, false, "default-excluded"},
		{"excluded readable", Final, "R/project/.env", Read, true, "context-path"},
		{"case variant of .git", Final, "R/project/.GIT/config", Write, false, "default-excluded"},
		// File context paths.
		{"file context read", Coordination, "R/files/config.yaml", Read, true, "context-path"},
		{"file context write (read permission)", Final, "R/files/config.yaml", Write, false, "read-only-context-path"},
		{"sibling of file context", Coordination, "R/files/secrets.yaml", Read, false, "file-context-sibling"},
		{"listing parent of file context", Coordination, "R/files", Read, false, "file-context-sibling"},
		{"below parent of file context", Coordination, "R/files/sub/x", Read, false, "file-context-sibling"},
		{"below the file itself", Coordination, "R/files/config.yaml/x", Read, false, "unresolvable-path"},
		// Private and unmanaged.
		{"other agent's workspace", Coordination, "R/other_ws/x.txt", Read, false, "private-path"},
		{"outside read", Coordination, "R/outside/secret.txt", Read, false, "outside-managed-paths"},
		{"outside write", Final, "/etc/passwd", Write, false, "outside-managed-paths"},
		{"root", Final, "/", Read, false, "outside-managed-paths"},
		{"component-wise: prefix is not containment", Final, "R/projectX/a", Read, false, "outside-managed-paths"},
		{"component-wise: ws prefix", Final, "R/wsx", Write, false, "outside-managed-paths"},
		{"tilde expands to home (outside)", Coordination, "~/secret.txt", Read, false, "outside-managed-paths"},
		{"~user refused", Coordination, "~root/x", Read, false, "unresolvable-path"},
		{"NUL refused", Coordination, "a\x00b", Read, false, "unresolvable-path"},
	}
	pols := map[Role]*Policy{Coordination: mustPolicy(t, tr.spec(Coordination)), Final: mustPolicy(t, tr.spec(Final))}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := pols[tt.role].CheckPath(tr.abs(tt.path), tt.access)
			if d.Allow != tt.allow || d.Rule != tt.rule {
				t.Fatalf("CheckPath(%q, %v) = allow %v rule %q (%s); want allow %v rule %q", tt.path, tt.access, d.Allow, d.Rule, d.Reason, tt.allow, tt.rule)
			}
			if !d.Allow && !strings.Contains(d.Reason, "Access denied") {
				t.Errorf("deny reason %q does not say Access denied", d.Reason)
			}
		})
	}
}

func TestDenyMessages(t *testing.T) {
	tr := newTree(t)
	p := mustPolicy(t, tr.spec(Final))
	tests := []struct {
		path   string
		access Access
		want   []string
	}{
		// Spec 000 "Sibling File Access Blocked" message.
		{"R/files/secrets.yaml", Read, []string{"Access denied: '" + tr.p("files/secrets.yaml") + "' is not an explicitly allowed file in this directory"}},
		{"R/project/golden/test1.json", Write, []string{"protected", tr.p("project/golden")}},
		{"R/outside/secret.txt", Read, []string{tr.p("outside/secret.txt"), "outside every path"}},
		{"R/project/.env", Write, []string{"'.env'", "read-only"}},
		{"R/temp/agent1/answer.txt", Write, []string{"temp workspace", "read-only"}},
	}
	for _, tt := range tests {
		d := p.CheckPath(tr.abs(tt.path), tt.access)
		for _, w := range tt.want {
			if !strings.Contains(d.Reason, w) {
				t.Errorf("CheckPath(%s).Reason = %q; want it to contain %q", tt.path, d.Reason, w)
			}
		}
	}
	c := mustPolicy(t, tr.spec(Coordination))
	d := c.CheckPath(tr.p("project/a.go"), Write)
	if !strings.Contains(d.Reason, "read-only during coordination") {
		t.Errorf("coordination write reason %q does not explain the role", d.Reason)
	}
}

// Spec 000 "Path Priority Resolution": a workspace inside a read context path stays writable.
func TestDeepestManagedPathDecides(t *testing.T) {
	tr := newTree(t)
	s := Spec{Agent: "a", Role: Coordination, Workspace: tr.p("project/.massgen/workspaces/ws_nested"),
		ContextPaths: []ContextPath{{Path: tr.p("project")}}}
	p := mustPolicy(t, s)
	tests := []struct {
		path  string
		a     Access
		allow bool
	}{
		{"R/project/.massgen/workspaces/ws_nested/index.html", Write, true},
		{"R/project/.massgen/workspaces/ws_nested/.git/x", Write, true},
		{"R/project/.massgen/workspaces/other/x", Write, false},
		{"R/project/.massgen/workspaces/other/x", Read, true},
		{"R/project/src/main.go", Write, false},
		{"R/project/src/main.go", Read, true},
	}
	for _, tt := range tests {
		if d := p.CheckPath(tr.abs(tt.path), tt.a); d.Allow != tt.allow {
			t.Errorf("%s %v: allow=%v (%s), want %v", tt.path, tt.a, d.Allow, d.Reason, tt.allow)
		}
	}
	// A read-only context path nested in a write one: the deeper one decides.
	s2 := Spec{Agent: "a", Role: Final, ContextPaths: []ContextPath{{Path: tr.p("project"), Write: true}, {Path: tr.p("project/docs")}}}
	p2 := mustPolicy(t, s2)
	if d := p2.CheckPath(tr.p("project/docs/readme.md"), Write); d.Allow {
		t.Errorf("nested read context was writable: %s", d.Reason)
	}
	if d := p2.CheckPath(tr.p("project/src/main.go"), Write); !d.Allow {
		t.Errorf("outer write context not writable: %s", d.Reason)
	}
	if d := p2.Decide(Request{Tool: "delete_file", Args: map[string]any{"path": tr.p("project/docs/..")}}); d.Allow {
		t.Errorf("deleting the dir holding a read-only context path was allowed")
	}
}

// Spec 001's Windows example, with / paths: the logic is the same.
func TestSpecWindowsExampleLogic(t *testing.T) {
	tr := newTree(t)
	tr.mkdir(t, "Projects/testing/golden_tests/subdir")
	tr.write(t, "Projects/testing/expected_output.txt")
	s := Spec{Agent: "a", Role: Final, ContextPaths: []ContextPath{{Path: tr.p("Projects/testing"), Write: true,
		Protected: []string{"golden_tests/", "expected_output.txt"}}}}
	p := mustPolicy(t, s)
	for path, allow := range map[string]bool{
		"R/Projects/testing/new_test.py":                  true,
		"R/Projects/testing/golden_tests/test1.json":      false,
		"R/Projects/testing/expected_output.txt":          false,
		"R/Projects/testing/golden_tests/subdir/file.txt": false,
	} {
		if d := p.CheckPath(tr.abs(path), Write); d.Allow != allow {
			t.Errorf("%s: allow=%v (%s), want %v", path, d.Allow, d.Reason, allow)
		}
	}
}

func TestFolderGuard(t *testing.T) {
	tr := newTree(t)
	s := tr.spec(Final)
	s.ReadPaths = []string{tr.p("project/docs")}
	s.WritePaths = []string{tr.p("project/src")}
	p := mustPolicy(t, s)
	tests := []struct {
		path  string
		a     Access
		allow bool
		rule  Rule
	}{
		{"R/project/docs/readme.md", Read, true, "context-path"},
		{"R/project/docs/readme.md", Write, false, "folder-guard"},
		{"R/project/src/main.go", Write, true, "context-path"},
		{"R/project/src/main.go", Read, true, "context-path"},
		{"R/project/new_test.py", Read, false, "folder-guard"},
		{"R/ws/a.txt", Write, false, "folder-guard"},
	}
	for _, tt := range tests {
		d := p.CheckPath(tr.abs(tt.path), tt.a)
		if d.Allow != tt.allow || d.Rule != tt.rule {
			t.Errorf("%s %v: allow=%v rule=%s (%s); want %v %s", tt.path, tt.a, d.Allow, d.Rule, d.Reason, tt.allow, tt.rule)
		}
	}
	if got := p.WritableRoots(); len(got) != 1 || got[0] != tr.p("project/src") {
		t.Errorf("WritableRoots = %v", got)
	}
	if !p.CanWrite() {
		t.Error("CanWrite false with a write path")
	}
	// Read paths only: nothing writable, write tools hidden.
	s.WritePaths = nil
	ro := mustPolicy(t, s)
	if ro.CanWrite() {
		t.Errorf("CanWrite true without write paths; roots %v", ro.WritableRoots())
	}
	if !strings.Contains(ro.DescribeLimits(), "writes only within none") {
		t.Errorf("DescribeLimits does not say nothing is writable:\n%s", ro.DescribeLimits())
	}
	// Coordination agents cannot write context paths: a guard naming one leaves nothing writable.
	s.WritePaths = []string{tr.p("project/src")}
	s.Role = Coordination
	if c := mustPolicy(t, s); c.CanWrite() {
		t.Errorf("coordination CanWrite with only a context write path: %v", c.WritableRoots())
	}
}

func TestRootsAndDescription(t *testing.T) {
	tr := newTree(t)
	p := mustPolicy(t, tr.spec(Final))
	w := p.WritableRoots()
	if strings.Join(w, ",") != tr.p("project")+","+tr.p("ws") {
		t.Errorf("WritableRoots = %v", w)
	}
	r := strings.Join(p.ReadableRoots(), ",")
	for _, want := range []string{tr.p("files/config.yaml"), tr.p("prev"), tr.p("temp/agent1")} {
		if !strings.Contains(r, want) {
			t.Errorf("ReadableRoots %s lacks %s", r, want)
		}
	}
	if strings.Contains(r, "other_ws") {
		t.Errorf("ReadableRoots lists a private path: %s", r)
	}
	ex := strings.Join(p.ExcludedUnder(tr.p("project")), ",")
	for _, want := range []string{"golden", "expected_output.txt", ".env", ".git", "node_modules", ".massgen"} {
		if !strings.Contains(ex, want) {
			t.Errorf("ExcludedUnder(project) = %s; lacks %s", ex, want)
		}
	}
	desc := p.DescribeLimits()
	for _, want := range []string{"Read and write: " + tr.p("project") + ", " + tr.p("ws"), "Read only:", tr.p("files/config.yaml"), "Protected", tr.p("ws")} {
		if !strings.Contains(desc, want) {
			t.Errorf("DescribeLimits lacks %q:\n%s", want, desc)
		}
	}
	c := mustPolicy(t, tr.spec(Coordination))
	if got := c.WritableRoots(); len(got) != 1 || got[0] != tr.p("ws") {
		t.Errorf("coordination WritableRoots = %v", got)
	}
}

func TestNewErrors(t *testing.T) {
	for _, s := range []Spec{
		{Workspace: "relative/ws"},
		{Mode: "yolo"},
		{ContextPaths: []ContextPath{{Path: ""}}},
		{Allow: []string{"execute_command(npm"}},
	} {
		if _, err := New(s); err == nil {
			t.Errorf("New(%+v) = nil error", s)
		}
	}
}

// Two policies in one process never share limits (spec 003 session isolation).
func TestPoliciesAreIndependent(t *testing.T) {
	tr := newTree(t)
	a := tr.spec(Final)
	b := tr.spec(Final)
	b.Workspace = tr.p("prev")
	b.ReadOnly = nil
	b.WritePaths = []string{tr.p("prev")}
	pa, pb := mustPolicy(t, a), mustPolicy(t, b)
	if d := pa.CheckPath(tr.p("prev/x"), Write); d.Allow {
		t.Error("policy a sees b's workspace as writable")
	}
	if d := pb.CheckPath(tr.p("ws/x"), Write); d.Allow {
		t.Error("policy b sees a's workspace as writable")
	}
}

// Spec 000's configuration example and permission scenarios: coordination agents read every
// context path; the final agent gets each path's configured permission.
func TestSpecConfigurationExample(t *testing.T) {
	tr := newTree(t)
	for _, d := range []string{"home/user/project/src", "home/user/project/docs", "home/user/shared_data", "legacy-system", "shared-library", "my-project"} {
		tr.mkdir(t, d)
	}
	ctx := []ContextPath{
		{Path: tr.p("home/user/project/src"), Write: true},
		{Path: tr.p("home/user/project/docs")},
		{Path: tr.p("home/user/shared_data"), Write: true},
		{Path: tr.p("legacy-system")},
		{Path: tr.p("shared-library")},
		{Path: tr.p("my-project"), Write: true},
	}
	want := map[string][2]bool{ // path -> {coordination write, final write}
		"home/user/project/src/a.py":  {false, true},
		"home/user/project/docs/a.md": {false, false},
		"home/user/shared_data/d.csv": {false, true},
		"legacy-system/main.c":        {false, false},
		"shared-library/lib.go":       {false, false},
		"my-project/new.go":           {false, true},
		"home/user/project/README.md": {false, false}, // the parent is not a context path
	}
	for ri, role := range []Role{Coordination, Final} {
		p := mustPolicy(t, Spec{Agent: "context_agent", Role: role, Workspace: tr.p("ws"), ContextPaths: ctx})
		for path, w := range want {
			if d := p.CheckPath(tr.p(path), Write); d.Allow != w[ri] {
				t.Errorf("role %d write %s: allow=%v (%s), want %v", role, path, d.Allow, d.Reason, w[ri])
			}
			readable := path != "home/user/project/README.md"
			if d := p.CheckPath(tr.p(path), Read); d.Allow != readable {
				t.Errorf("role %d read %s: allow=%v (%s), want %v", role, path, d.Allow, d.Reason, readable)
			}
		}
	}
}
