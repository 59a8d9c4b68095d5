package permissions

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"
)

// winFS is a Windows file system in memory: names compare without case, as on NTFS. Entries
// are directories unless given as files, links (symbolic links and junctions: Readlink
// answers) or other reparse points (Readlink fails). short maps 8.3 short paths to long ones.
type winFS struct {
	files map[string]bool   // upper-cased path -> a file (false: a directory)
	links map[string]string // upper-cased path -> link target
	irreg map[string]bool   // upper-cased path -> a reparse point that is no link
	short map[string]string // upper-cased short path -> long path
}

func newWinFS() *winFS {
	return &winFS{files: map[string]bool{}, links: map[string]string{}, irreg: map[string]bool{}, short: map[string]string{}}
}

func (w *winFS) dir(paths ...string) *winFS {
	for _, p := range paths {
		w.files[strings.ToUpper(p)] = false
	}
	return w
}

func (w *winFS) file(paths ...string) *winFS {
	for _, p := range paths {
		w.files[strings.ToUpper(p)] = true
	}
	return w
}

type winInfo struct {
	name string
	mode fs.FileMode
}

func (i winInfo) Name() string       { return i.name }
func (i winInfo) Size() int64        { return 0 }
func (i winInfo) Mode() fs.FileMode  { return i.mode }
func (i winInfo) ModTime() time.Time { return time.Time{} }
func (i winInfo) IsDir() bool        { return i.mode.IsDir() }
func (i winInfo) Sys() any           { return nil }

func (w *winFS) Lstat(name string) (fs.FileInfo, error) {
	k := strings.ToUpper(name)
	if long, ok := w.short[k]; ok {
		k = strings.ToUpper(long) // Windows opens short names too
	}
	switch {
	case w.links[k] != "":
		return winInfo{name, fs.ModeSymlink}, nil
	case w.irreg[k]:
		return winInfo{name, fs.ModeIrregular}, nil
	}
	isFile, ok := w.files[k]
	if !ok {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
	}
	if isFile {
		return winInfo{name, 0}, nil
	}
	return winInfo{name, fs.ModeDir}, nil
}

func (w *winFS) Readlink(name string) (string, error) {
	k := strings.ToUpper(name)
	if long, ok := w.short[k]; ok {
		k = strings.ToUpper(long)
	}
	if t := w.links[k]; t != "" {
		return t, nil
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: errors.New("not a link")}
}

func (w *winFS) LongName(p string) (string, error) {
	if long, ok := w.short[strings.ToUpper(p)]; ok {
		return long, nil
	}
	if _, err := w.Lstat(p); err != nil {
		return "", err
	}
	return p, nil
}

// A Windows tree: a user's workspace, a project with a .git (8.3 name GIT~1), links of every
// kind and a share.
func testWinFS() *winFS {
	w := newWinFS().dir(`C:\Users`, `C:\Users\u`, `C:\Users\u\ws`, `C:\proj`, `C:\proj\src`, `C:\proj\.git`,
		`C:\proj\golden`, `C:\secret`, `C:\Program Files`, `C:\projects`, `\\srv\share\data`, `D:\other`).
		file(`C:\proj\src\a.go`, `C:\proj\.git\config`, `C:\secret\key.txt`, `C:\Users\u\ws\notes.txt`)
	w.links[strings.ToUpper(`C:\Users\u\ws\out`)] = `C:\secret`
	w.links[strings.ToUpper(`C:\Users\u\ws\rel`)] = `..\..\..\proj`
	w.links[strings.ToUpper(`C:\Users\u\ws\rooted`)] = `\secret`
	w.links[strings.ToUpper(`C:\Users\u\ws\unc`)] = `\\srv\share\data`
	w.links[strings.ToUpper(`C:\Users\u\ws\unc2`)] = `//srv/share/data`
	w.links[strings.ToUpper(`C:\Users\u\ws\vol`)] = `\\?\Volume{0b1c2d3e-0000-0000-0000-100000000000}\`
	w.links[strings.ToUpper(`C:\Users\u\ws\loop1`)] = `loop2`
	w.links[strings.ToUpper(`C:\Users\u\ws\loop2`)] = `loop1`
	w.links[strings.ToUpper(`C:\Users\u\ws\to_git`)] = `C:\proj\GIT~1`
	w.irreg[strings.ToUpper(`C:\Users\u\ws\cloud`)] = true
	w.short[strings.ToUpper(`C:\proj\GIT~1`)] = `C:\proj\.git`
	w.short[strings.ToUpper(`C:\PROGRA~1`)] = `C:\Program Files`
	return w
}

func TestResolveWindows(t *testing.T) {
	w := testWinFS()
	for _, tc := range []struct{ in, want, err string }{
		{`C:\Users\u\ws\notes.txt`, `C:\Users\u\ws\notes.txt`, ""},
		{`c:/Users//u/ws/./x/../notes.txt`, `C:\Users\u\ws\notes.txt`, ""}, // ".." on the text, as Win32
		{`C:\Users\u\ws\new\deeper.txt`, `C:\Users\u\ws\new\deeper.txt`, ""},
		{`C:\Users\u\ws\out\key.txt`, `C:\secret\key.txt`, ""},
		{`C:\Users\u\ws\rel\src\a.go`, `C:\proj\src\a.go`, ""},
		{`C:\Users\u\ws\rooted\key.txt`, `C:\secret\key.txt`, ""},
		{`C:\Users\u\ws\unc\f`, `\\srv\share\data\f`, ""},
		{`C:\Users\u\ws\unc2\f`, `\\srv\share\data\f`, ""},
		{`C:\Users\u\ws\to_git\config`, `C:\proj\.git\config`, ""},
		{`C:\proj\GIT~1\config`, `C:\proj\.git\config`, ""},
		{`C:\PROGRA~1\x`, `C:\Program Files\x`, ""},
		{`\\?\C:\proj\src\a.go`, `C:\proj\src\a.go`, ""},
		{`C:\proj\NEWDIR~1\x`, "", "8.3 short name"},
		{`C:\Users\u\ws\vol\x`, "", `only \\?\C:`}, // a volume GUID: not followed
		{`C:\Users\u\ws\loop1`, "", "too many levels"},
		{`C:\Users\u\ws\cloud\x`, "", "reparse point"},
		{`C:\Users\u\ws\notes.txt\x`, "", "not a directory"},
		{`C:\Users\u\ws\CON`, "", "reserved device name"},
		{`C:\Users\u\ws\nul.txt`, "", "reserved device name"},
		{`C:\Users\u\ws\notes.txt:hidden`, "", "alternate data stream"},
		{`C:\Users\u\ws\notes.txt::$DATA`, "", "alternate data stream"},
		{`C:\secret\key.txt.`, "", "ends with a dot"},
		{`C:\secret\key.txt `, "", "ends with a dot or a space"},
		{`\secret`, "", "current drive"},
		{`C:secret`, "", "current directory of drive"},
	} {
		got, err := resolveWindows(w, tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(errText(err), tc.err) {
				t.Errorf("resolveWindows(%q) = %q, %v; want an error saying %q", tc.in, got, err, tc.err)
			}
		case err != nil || got != tc.want:
			t.Errorf("resolveWindows(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// errText is the error with a ResolveError's detail (its own message hides the cause).
func errText(err error) string {
	var re *ResolveError
	if errors.As(err, &re) {
		if re.Err == nil {
			return err.Error() + ": not a directory"
		}
		return err.Error() + ": " + re.Err.Error()
	}
	return err.Error()
}

func TestWindowsFlavourPaths(t *testing.T) {
	f := windowsPaths
	for _, tc := range []struct {
		p, root string
		want    bool
	}{
		{`C:\proj\src`, `C:\proj`, true},
		{`C:\PROJ\Src`, `c:\proj`, true},
		{`C:\proj`, `C:\proj`, true},
		{`C:\projects`, `C:\proj`, false},
		{`C:\x`, `C:\`, true},
		{`D:\proj`, `C:\proj`, false},
		{`\\SRV\Share\a`, `\\srv\share\`, true},
		{`\\srv\share2\a`, `\\srv\share`, false},
		{`C:\proj\CON`, `C:\proj`, false}, // refused by winpath: within nothing
	} {
		if got := f.within(tc.p, tc.root); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.p, tc.root, got, tc.want)
		}
	}
	for _, tc := range []struct{ q, parent string }{
		{`C:\a\b`, `C:\a`}, {`C:\a`, `C:\`}, {`C:\`, `C:\`},
		{`\\srv\share\a\b`, `\\srv\share\a`}, {`\\srv\share\a`, `\\srv\share\`}, {`\\srv\share\`, `\\srv\share\`},
	} {
		if got := f.parent(tc.q); got != tc.parent {
			t.Errorf("parent(%q) = %q, want %q", tc.q, got, tc.parent)
		}
		if root := tc.q == tc.parent; f.isRoot(tc.q) != root {
			t.Errorf("isRoot(%q) = %v, want %v", tc.q, !root, root)
		}
	}
	for _, tc := range []struct{ in, want, err string }{
		{`notes.txt`, `C:\ws\notes.txt`, ""},
		{`sub/x`, `C:\ws\sub/x`, ""}, // cleaned by the resolver
		{"", `C:\ws`, ""},
		{`~\doc.txt`, `C:\Users\u/doc.txt`, ""},
		{`~/doc.txt`, `C:\Users\u/doc.txt`, ""},
		{`D:\x`, `D:\x`, ""},
		{`\x`, `\x`, ""}, // absolute enough not to be joined; winpath then refuses it
		{`C:x`, `C:x`, ""},
		{`~bob\x`, "", "~user"},
	} {
		got, err := f.absolute(tc.in, `C:\ws`, `C:\Users\u`)
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) || tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("absolute(%q) = %q, %v; want %q (error %q)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// The Windows flavour decides on Linux against winFS: canonical form, containment without case,
// winpath's refusals, short names and links resolved before any rule is applied.
func TestWindowsFlavourPolicy(t *testing.T) {
	spec := Spec{
		Agent: "agent_a", Role: Final, Home: `C:\Users\u`, Workspace: `C:\Users\u\ws`,
		ContextPaths: []ContextPath{{Path: `c:\PROJ`, Write: true, Protected: []string{"golden", "secrets"}}},
	}
	p, err := newPolicyFlavour(spec, testWinFS(), true, windowsPaths)
	if err != nil {
		t.Fatal(err)
	}
	if p.workspace != `C:\Users\u\ws` {
		t.Fatalf("workspace = %q", p.workspace)
	}
	for _, tc := range []struct {
		path  string
		allow bool
		rule  Rule
		says  string
	}{
		{`C:\proj\src\a.go`, true, RuleContextPath, ""},
		{`c:/PROJ/src/new.go`, true, RuleContextPath, ""},
		{`notes.txt`, true, RuleWorkspace, ""},
		{`C:\Users\u\ws\.git\config`, true, RuleWorkspace, ""}, // excluded names are free in the own workspace
		{`C:\proj\golden\x.json`, false, RuleProtected, ""},
		{`c:\Proj\GOLDEN\x.json`, false, RuleProtected, ""},
		// Windows upper-cases each character on its own: ſ (long s) is S, so ſecrets is secrets.
		{`C:\proj\ſecrets\x`, false, RuleProtected, ""},
		{`C:\proj\node_moduleſ\x`, false, RuleDefaultExcluded, ""},
		{`C:\proj\.git\config`, false, RuleDefaultExcluded, ""},
		{`C:\proj\.GIT\config`, false, RuleDefaultExcluded, ""},
		{`C:\proj\GIT~1\config`, false, RuleDefaultExcluded, ""},        // the 8.3 name of .git
		{`C:\Users\u\ws\to_git\config`, false, RuleDefaultExcluded, ""}, // a link to it by its 8.3 name
		{`C:\proj\src\a.go:payload`, false, RuleUnresolvable, "alternate data stream"},
		{`C:\proj\src\NUL`, false, RuleUnresolvable, "reserved device name"},
		{`C:\proj\golden.`, false, RuleUnresolvable, "ends with a dot"},
		{`C:\proj\NEWDIR~1\x`, false, RuleUnresolvable, "8.3 short name"},
		{`C:\projects\x`, false, RuleOutside, ""},
		{`D:\proj\src\a.go`, false, RuleOutside, ""},
		{`\\srv\share\data\x`, false, RuleOutside, ""},
		{`..\..\secret\key.txt`, false, RuleOutside, ""},
		{`C:\Users\u\ws\out\key.txt`, false, RuleOutside, ""},
		{`C:\Users\u\ws\rel\golden\x`, false, RuleProtected, ""},
		{`\proj\src\a.go`, false, RuleUnresolvable, "current drive"},
		{`C:proj\src\a.go`, false, RuleUnresolvable, "current directory of drive"},
	} {
		d := p.Decide(Request{Tool: "write_file", Args: map[string]any{"path": tc.path, "content": "x"}})
		if d.Allow != tc.allow || d.Rule != tc.rule || !strings.Contains(d.Reason, tc.says) {
			t.Errorf("write %s: allow=%v rule=%s (%s); want allow=%v rule=%s saying %q", tc.path, d.Allow, d.Rule, d.Reason, tc.allow, tc.rule, tc.says)
		}
	}
	// Removals: a managed root and a directory holding a protected path, in any case, are
	// refused as a whole; a link in the workspace goes itself (its target is not judged).
	for _, tc := range []struct {
		path  string
		allow bool
		rule  Rule
	}{
		{`C:\PROJ`, false, RuleManagedRoot},
		{`c:\proj\`, false, RuleManagedRoot},
		{`C:\`, false, RuleOutside},
		{`C:\Users\u\ws\out`, true, RuleWorkspace},
		{`C:\proj\src\a.go`, true, RuleContextPath},
	} {
		d := p.CheckPath(tc.path, Delete)
		if d.Allow != tc.allow || d.Rule != tc.rule {
			t.Errorf("delete %s: allow=%v rule=%s (%s); want allow=%v rule=%s", tc.path, d.Allow, d.Rule, d.Reason, tc.allow, tc.rule)
		}
	}
	// Names keep the case they were configured in (the drive letter is upper-cased).
	if got := p.WritableRoots(); fmt.Sprint(got) != `[C:\PROJ C:\Users\u\ws]` {
		t.Errorf("WritableRoots = %q", got)
	}
	if got := windowsPaths.rel(`C:\PROJ\src\a.go`, `c:\proj`); got != `src\a.go` {
		t.Errorf("rel = %q, want src\\a.go", got)
	}
	if !p.Within(`c:\proj\SRC`, `C:\Proj`) || p.Within(`C:\projects`, `C:\proj`) {
		t.Error("Policy.Within: wrong containment for the Windows flavour")
	}
}

// On Windows commands run through cmd.exe but the check parses commands as a POSIX shell does
// (and knows sh's builtins, not cmd's: `type` reads a file there): a command runs only when it is
// one plain program call named by an allow rule, and its paths are still checked.
func TestWindowsFlavourCommands(t *testing.T) {
	spec := Spec{Agent: "agent_a", Role: Final, Home: `C:\Users\u`, Workspace: `C:\Users\u\ws`,
		ContextPaths: []ContextPath{{Path: `C:\proj`, Write: true}},
		Allow:        []string{"execute_command(python *)", "execute_command(npm test)", "execute_command(git status*)"},
		Tools:        testTools}
	p, err := newPolicyFlavour(spec, testWinFS(), true, windowsPaths)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command string
		allow   bool
		says    string
	}{
		{`npm test`, true, ""},
		{`python notes.txt`, true, ""},
		// The rule is the gate: the check knows sh's builtins, and sh's `type` takes no path.
		{`type notes.txt`, false, "permissions.allow"},
		{`git status --short C:/proj/src`, true, ""},
		{`python C:/proj/.git/config`, false, "is read-only"}, // as on Linux unsandboxed
		{`npm install`, false, `permissions.allow names it, e.g. "execute_command(npm install)"`},
		{`del notes.txt`, false, "permissions.allow"},
		{`python ../../../secret/key.txt`, false, "outside"},
		{`python D:/other/f`, false, "outside"},
		{`python C:/proj/src/CON`, false, "reserved device name"},
		{`type ..\..\..\secret\key.txt`, false, `contains "\\"`},
		{`type %USERPROFILE%/secret.txt`, false, `contains "%"`},
		{`type !X!/key.txt`, false, `contains "!"`},
		{`type ..^/..^/secret/key.txt`, false, `contains "^"`},
		{`npm test & del /q notes.txt`, false, `contains "&"`},
		{`npm test | more`, false, `contains "|"`},
		{`type notes.txt > C:/proj/.git/config`, false, `contains ">"`},
		{"npm test\ndel notes.txt", false, `contains "\n"`},
		{`type "notes.txt"`, false, `contains "\""`},
	} {
		d := p.Decide(Request{Tool: "execute_command", Args: map[string]any{"command": tc.command}})
		if d.Allow != tc.allow || !strings.Contains(d.Reason, tc.says) {
			t.Errorf("%s: allow=%v (%s); want allow=%v saying %q", tc.command, d.Allow, d.Reason, tc.allow, tc.says)
		}
	}
	// The Unix flavour judges the same shell text as before: no allow rule needed.
	u, err := newPolicyFlavour(Spec{Agent: "agent_a", Role: Final, Workspace: t.TempDir()}, osFS{}, false, unixPaths)
	if err != nil {
		t.Fatal(err)
	}
	if d := u.Decide(Request{Tool: "execute_command", Args: map[string]any{"command": "ls"}}); !d.Allow {
		t.Errorf("unix flavour: ls refused: %s", d.Reason)
	}
}

// On Windows rules compare without case and read \ as a separator, in the rule and in the call:
// a deny rule cannot be passed by spelling a path or a program differently.
func TestWindowsFlavourRules(t *testing.T) {
	spec := Spec{Agent: "agent_a", Role: Final, Home: `C:\Users\u`, Workspace: `C:\Users\u\ws`,
		ContextPaths: []ContextPath{{Path: `C:\proj`, Write: true}},
		Allow:        []string{"execute_command(*)"},
		Tools:        testTools,
		Deny: []string{"write_file(src/secret/**)", `write_file(C:\proj\private\**)`, "write_file(**/keys/**)",
			"execute_command(del *)", "execute_command(re:rd)"}}
	p, err := newPolicyFlavour(spec, testWinFS(), true, windowsPaths)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, arg string
		allow     bool
	}{
		{"write_file", `C:\proj\src\a.go`, true},
		{"write_file", `C:\proj\src\secret\k`, false},
		{"write_file", `c:/PROJ/Src/SECRET/k`, false},
		{"write_file", `C:\proj\private\x`, false},
		{"write_file", `c:/proj/PRIVATE/x`, false},
		{"write_file", `C:\proj\src\keyſ\x`, false}, // ſ upper-cases to S, as on NTFS
		{"execute_command", `npm test`, true},
		{"execute_command", `del notes.txt`, false},
		{"execute_command", `DEL notes.txt`, false},
		{"execute_command", `RD sub`, false},
	} {
		args := map[string]any{"path": tc.arg, "content": "x"}
		if tc.tool == "execute_command" {
			args = map[string]any{"command": tc.arg}
		}
		d := p.Decide(Request{Tool: tc.tool, Args: args})
		if d.Allow != tc.allow || !tc.allow && d.Rule != RuleDenyRule {
			t.Errorf("%s %s: allow=%v rule=%s (%s); want allow=%v (denied by a deny rule)", tc.tool, tc.arg, d.Allow, d.Rule, d.Reason, tc.allow)
		}
	}
}

// Attack: thousands of spellings of a protected file and of .git\config (case per character,
// either slash, doubled separators, "." and "x\.." detours, the \\?\ prefix, the 8.3 name, a
// relative link) must all be refused, each by the rule that protects the file.
func TestWindowsFlavourSpellings(t *testing.T) {
	spec := Spec{Agent: "agent_a", Role: Final, Home: `C:\Users\u`, Workspace: `C:\Users\u\ws`,
		ContextPaths: []ContextPath{{Path: `C:\proj`, Write: true, Protected: []string{"golden"}}}}
	p, err := newPolicyFlavour(spec, testWinFS(), true, windowsPaths)
	if err != nil {
		t.Fatal(err)
	}
	rng := uint64(1)
	rnd := func(n int) int { rng = rng*6364136223846793005 + 1442695040888963407; return int(rng>>33) % n }
	spell := func(names []string) string {
		var b strings.Builder
		for i, n := range names {
			if i > 0 {
				b.WriteString([]string{`\`, `/`, `\\`, `\.\`, `\zz\..\`}[rnd(5)])
			}
			for _, r := range n {
				s := string(r)
				if rnd(2) == 0 {
					s = strings.ToUpper(s)
				} else {
					s = strings.ToLower(s)
				}
				b.WriteString(s)
			}
		}
		return b.String()
	}
	targets := []struct {
		names []string
		rule  Rule
	}{
		{[]string{"C:", "proj", "golden", "x.json"}, RuleProtected},
		{[]string{"C:", "Users", "u", "ws", "rel", "golden", "x.json"}, RuleProtected},
		{[]string{"C:", "proj", ".git", "config"}, RuleDefaultExcluded},
		{[]string{"C:", "proj", "GIT~1", "config"}, RuleDefaultExcluded},
		{[]string{"C:", "Users", "u", "ws", "to_git", "config"}, RuleDefaultExcluded},
	}
	for i := 0; i < 5000; i++ {
		tg := targets[i%len(targets)]
		path := spell(tg.names)
		if rnd(4) == 0 && !strings.Contains(path, "/") && !strings.Contains(path, `\.\`) && !strings.Contains(path, `..`) && !strings.Contains(path, `\\`) {
			path = `\\?\` + path
		}
		d := p.Decide(Request{Tool: "write_file", Args: map[string]any{"path": path, "content": "x"}})
		if d.Allow || d.Rule != tg.rule {
			t.Fatalf("write %s: allow=%v rule=%s (%s); want denied by %s", path, d.Allow, d.Rule, d.Reason, tg.rule)
		}
	}
}

// An external tool's argument that looks like a Windows path is checked as one.
func TestWindowsFlavourExternalTools(t *testing.T) {
	spec := Spec{Agent: "agent_a", Role: Final, Home: `C:\Users\u`, Workspace: `C:\Users\u\ws`}
	p, err := newPolicyFlavour(spec, testWinFS(), true, windowsPaths)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg   string
		allow bool
	}{
		{`C:\secret\key.txt`, false},
		{`c:/secret/key.txt`, false},
		{`\\srv\share\data\x`, false},
		{`.\notes.txt`, true},
		{`~\ws\notes.txt`, true},
		{`C:\Users\u\ws\notes.txt:x`, false},
	} {
		d := p.Decide(Request{Tool: "mcp__srv__summarise", Args: map[string]any{"where": tc.arg}})
		if d.Allow != tc.allow {
			t.Errorf("mcp__srv__summarise %s: allow=%v (%s); want %v", tc.arg, d.Allow, d.Reason, tc.allow)
		}
	}
}
