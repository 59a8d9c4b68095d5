package permissions

import (
	"os"
	"testing"
)

func TestHostilePaths(t *testing.T) {
	tr := newTree(t)
	// Links planted in the workspace (an agent can create these with a command).
	tr.link(t, "/etc/passwd", "ws/to_etc")
	tr.link(t, tr.p("outside"), "ws/to_outside_dir")
	tr.link(t, tr.p("project/golden/test1.json"), "ws/to_protected")
	tr.link(t, tr.p("project/golden"), "ws/to_protected_dir")
	tr.link(t, tr.p("files/secrets.yaml"), "ws/to_sibling")
	tr.link(t, tr.p("files/config.yaml"), "ws/to_filectx")
	tr.link(t, "chain2", "ws/chain1")
	tr.link(t, "chain3", "ws/chain2")
	tr.link(t, tr.p("outside/secret.txt"), "ws/chain3")
	tr.link(t, "loop2", "ws/loop1")
	tr.link(t, "loop1", "ws/loop2")
	tr.link(t, tr.p("outside/new_file.txt"), "ws/dangling_out")
	tr.link(t, tr.p("ws/not_yet.txt"), "ws/dangling_in")
	tr.link(t, tr.p("outside"), "ws/sub/up")  // ws/sub/up -> outside
	tr.link(t, "../../project", "ws/sub/rel") // relative link climbing out
	tr.link(t, tr.p("temp/agent1"), "ws/to_temp")
	tr.link(t, tr.p("project/.git"), "ws/to_git")
	tr.mkdir(t, "project/src/deep")
	tr.link(t, tr.p("outside"), "project/src/deep/out") // a link inside a context path
	// Unicode look-alikes: a Cyrillic "а" in "golden" and in "files".
	tr.mkdir(t, "project/gоlden") // Cyrillic о
	tests := []struct {
		name   string
		role   Role
		path   string
		access Access
		allow  bool
		rule   Rule
	}{
		{"symlink to /etc", Final, "R/ws/to_etc", Read, false, "outside-managed-paths"},
		{"symlink to /etc via relative", Final, "to_etc", Write, false, "outside-managed-paths"},
		{"through a dir symlink", Final, "R/ws/to_outside_dir/secret.txt", Read, false, "outside-managed-paths"},
		{"create through a dir symlink", Final, "R/ws/to_outside_dir/new.txt", Write, false, "outside-managed-paths"},
		{"symlink to protected file", Final, "R/ws/to_protected", Write, false, "protected-path"},
		{"symlink to protected dir", Final, "R/ws/to_protected_dir/new.json", Write, false, "protected-path"},
		{"symlink to protected, read ok", Final, "R/ws/to_protected", Read, true, "context-path"},
		{"symlink to sibling of file context", Coordination, "R/ws/to_sibling", Read, false, "file-context-sibling"},
		{"symlink to the file context path", Coordination, "R/ws/to_filectx", Read, true, "context-path"},
		{"symlink to the file context path, write", Final, "R/ws/to_filectx", Write, false, "read-only-context-path"},
		{"chained links", Final, "R/ws/chain1", Read, false, "outside-managed-paths"},
		{"link loop", Final, "R/ws/loop1", Read, false, "unresolvable-path"},
		{"dangling link judged by target", Final, "R/ws/dangling_out", Write, false, "outside-managed-paths"},
		{"dangling link inside ws", Final, "R/ws/dangling_in", Write, true, "workspace"},
		{"link then ..: kernel goes to outside/..", Final, "R/ws/sub/up/../outside/secret.txt", Read, false, "outside-managed-paths"},
		{"link then .. textual reading differs", Final, "R/ws/sub/up/../a.txt", Read, false, "outside-managed-paths"},
		{"relative link climbing into context, write in coordination", Coordination, "R/ws/sub/rel/src/main.go", Write, false, "read-only-context-path"},
		{"symlink into temp workspace, write", Final, "R/ws/to_temp/answer.txt", Write, false, "read-only-temp-workspace"},
		{"symlink to .git of a context", Final, "R/ws/to_git/config", Write, false, "default-excluded"},
		{"link inside context path pointing out", Final, "R/project/src/deep/out/secret.txt", Read, false, "outside-managed-paths"},
		{".. escape from workspace", Final, "R/ws/../outside/secret.txt", Read, false, "outside-managed-paths"},
		{".. escape, relative", Final, "../outside/secret.txt", Read, false, "outside-managed-paths"},
		{"deep .. escape", Final, "sub/../../../../../../etc/passwd", Read, false, "outside-managed-paths"},
		{".. into protected", Final, "R/project/src/../golden/test1.json", Write, false, "protected-path"},
		{".. past missing dir", Final, "R/ws/missing/../../outside/x", Write, false, "outside-managed-paths"},
		{".. past missing dir into link", Final, "R/ws/missing/../to_etc", Read, false, "outside-managed-paths"},
		{"double slash", Final, "R//project//golden//test1.json", Write, false, "protected-path"},
		{"trailing /.", Final, "R/project/golden/.", Write, false, "protected-path"},
		{"trailing slash", Final, "R/project/golden/", Write, false, "protected-path"},
		{"dot segments", Final, "R/project/./golden/./test1.json", Write, false, "protected-path"},
		{"file sibling via ..", Coordination, "R/files/config.yaml/../secrets.yaml", Read, false, "unresolvable-path"},
		{"file sibling via dir ..", Coordination, "R/project/../files/secrets.yaml", Read, false, "file-context-sibling"},
		{"unicode look-alike is another name (not protected)", Final, "R/project/gоlden/x", Write, true, "context-path"},
		{"unicode look-alike file name is not the file context", Coordination, "R/files/cоnfig.yaml", Read, false, "file-context-sibling"},
		{"unicode look-alike of .env is not excluded", Final, "R/project/.еnv", Write, true, "context-path"},
	}
	snap := func(s Spec) *Policy {
		p, err := NewSnapshot(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, kind := range []string{"live", "snapshot"} {
		pols := map[Role]*Policy{Coordination: mustPolicy(t, tr.spec(Coordination)), Final: mustPolicy(t, tr.spec(Final))}
		if kind == "snapshot" {
			pols = map[Role]*Policy{Coordination: snap(tr.spec(Coordination)), Final: snap(tr.spec(Final))}
		}
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				// Twice: the snapshot answers the second time from its memo.
				for range 2 {
					d := pols[tt.role].CheckPath(tr.abs(tt.path), tt.access)
					if d.Allow != tt.allow || d.Rule != tt.rule {
						t.Fatalf("CheckPath(%q, %v) = allow %v rule %q (%s); want allow %v rule %q", tt.path, tt.access, d.Allow, d.Rule, d.Reason, tt.allow, tt.rule)
					}
				}
			})
		}
	}
}

// One policy serves concurrent agents' calls (go test -race).
func TestPolicyConcurrentUse(t *testing.T) {
	tr := newTree(t)
	p := mustPolicy(t, tr.spec(Final))
	done := make(chan bool)
	for i := 0; i < 8; i++ {
		go func() {
			ok := true
			for j := 0; j < 50; j++ {
				ok = ok && p.Decide(Request{Tool: "write_file", Args: map[string]any{"path": "a.txt"}}).Allow
				ok = ok && !p.Decide(Request{Tool: "execute_command", Args: map[string]any{"command": "cat /etc/passwd"}}).Allow
			}
			done <- ok
		}()
	}
	for i := 0; i < 8; i++ {
		if !<-done {
			t.Error("a concurrent decision came out wrong")
		}
	}
}

// Managed roots are resolved too: a workspace given through a symlink is the same workspace, and
// a context path that is a symlink grants its target, not the link's directory.
func TestSymlinkedRoots(t *testing.T) {
	tr := newTree(t)
	tr.link(t, tr.p("ws"), "ws_link")
	tr.link(t, tr.p("project"), "proj_link")
	s := Spec{Agent: "a", Role: Final, Workspace: tr.p("ws_link"), ContextPaths: []ContextPath{{Path: tr.p("proj_link"), Write: true,
		Protected: []string{tr.p("proj_link/golden")}}}}
	p := mustPolicy(t, s)
	for path, allow := range map[string]bool{
		"R/ws/a.txt":                  true,
		"R/ws_link/a.txt":             true,
		"R/project/src/main.go":       true,
		"R/proj_link/src/main.go":     true,
		"R/project/golden/test1.json": false,
		"R/proj_link/golden/x":        false,
		"R/outside/secret.txt":        false,
	} {
		if d := p.CheckPath(tr.abs(path), Write); d.Allow != allow {
			t.Errorf("%s: allow=%v (%s), want %v", path, d.Allow, d.Reason, allow)
		}
	}
	if r, _ := p.Resolve("a.txt"); r != tr.p("ws/a.txt") {
		t.Errorf("Resolve(a.txt) = %s", r)
	}
}

// A directory the resolver may not read cannot be judged: deny.
func TestUnreadableDirDenies(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	tr := newTree(t)
	tr.mkdir(t, "ws/locked")
	if err := os.Chmod(tr.p("ws/locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(tr.p("ws/locked"), 0o755) })
	p := mustPolicy(t, tr.spec(Final))
	if d := p.CheckPath(tr.p("ws/locked/x/y"), Read); d.Allow {
		t.Errorf("path under an unreadable dir allowed: %s", d.Reason)
	}
}
