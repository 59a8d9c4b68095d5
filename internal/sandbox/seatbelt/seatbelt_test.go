package seatbelt

import (
	"flag"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/vocab"
)

var update = flag.Bool("update", false, "rewrite the golden profiles in testdata/")

// project is a final agent's policy: its workspace (own) nested in the user's project, which is
// writable with .git and .env protected and .massgen private, plus a read-only context path.
func project(ci bool) Policy {
	return Policy{
		Read:            []string{"/Users/u/docs"},
		Write:           []string{"/Users/u/proj", "/Users/u/proj/.massgen/workspaces/ws1", "/var/folders/xy/T/massgen-cmd-1"},
		Keep:            []string{"/Users/u/proj/.git", "/Users/u/proj/.env", "/Users/u/proj/src/.env", "/Users/u/proj/.massgen"},
		Hide:            []string{"/Users/u/proj/.massgen"},
		Own:             []string{"/Users/u/proj/.massgen/workspaces/ws1", "/var/folders/xy/T/massgen-cmd-1"},
		CaseInsensitive: ci,
	}
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		pol  Policy
	}{
		{"workspace", Policy{Write: []string{"/Users/u/ws", "/tmp/massgen-cmd-1"}, Own: []string{"/Users/u/ws", "/tmp/massgen-cmd-1"},
			Read: []string{"/Users/u/.massgen/temp/agent_a"}, CaseInsensitive: true}},
		{"project", project(true)},
		{"project_case_sensitive", project(false)},
		{"project_allowlist", func() Policy { p := project(true); p.Network, p.ProxyPort = "allowlist", 53128; return p }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Generate(tt.pol)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			b.WriteString(p.Text)
			b.WriteString("\n;; parameters (sandbox-exec -D NAME=VALUE)\n")
			for _, pr := range p.Params {
				b.WriteString(";; " + pr.Name + "=" + pr.Value + "\n")
			}
			file := filepath.Join("testdata", tt.name+".sb")
			if *update {
				if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("profile differs from %s (run with -update if the change is intended):\n%s", file, b.String())
			}
			sb := load(t, p)
			sb.touchAll()
			for _, pr := range p.Params {
				if !sb.used[pr.Name] {
					t.Errorf("parameter %s is defined but not used", pr.Name)
				}
			}
		})
	}
}

func TestDecisions(t *testing.T) {
	const (
		r = "file-read-data"
		w = "file-write-data"
		c = "file-write-create"
		u = "file-write-unlink"
	)
	tests := []struct {
		name string
		ci   bool
		op   string
		path string
		want bool
	}{
		{"project file", true, w, "/Users/u/proj/main.go", true},
		{"new directory", true, c, "/Users/u/proj/pkg", true},
		{"delete a file", true, u, "/Users/u/proj/main.go", true},
		{"system binary", true, r, "/bin/sh", true},
		{"system binary not writable", true, w, "/usr/bin/env", false},
		{"home not readable", true, r, "/Users/u/.ssh/id_ed25519", false},
		{"home not writable", true, c, "/Users/u/evil", false},
		{"tmp not readable", true, r, "/private/tmp/other", false},
		{"context readable", true, r, "/Users/u/docs/a.md", true},
		{"context not writable", true, w, "/Users/u/docs/a.md", false},
		{"temp dir writable", true, w, "/private/var/folders/xy/T/massgen-cmd-1/f", true},

		{"protected .git", true, w, "/Users/u/proj/.git/config", false},
		{"protected .git itself", true, u, "/Users/u/proj/.git", false},
		{"protected .git in caps", true, w, "/Users/u/proj/.GIT/config", false},
		{"protected .git mixed case", true, c, "/Users/u/proj/.gIt/hooks/pre-commit", false},
		{"protected .git, case-sensitive volume", false, w, "/Users/u/proj/.git/config", false},
		{"other case is another file on a case-sensitive volume", false, w, "/Users/u/proj/.GIT", true},
		{"protected .env", true, w, "/Users/u/proj/.env", false},
		{"protected nested .env", true, w, "/Users/u/proj/SRC/.Env", false},
		{"rename the project", true, u, "/Users/u/proj", false},
		{"rename the directory above a protected path", true, u, "/Users/u/proj/src", false},
		{"rename it in caps", true, u, "/Users/u/proj/Src", false},
		{"rename it, case-sensitive volume", false, u, "/Users/u/proj/src", false},
		{"a sibling directory can go", true, u, "/Users/u/proj/docs", true},
		{"files beside a protected path can go", true, u, "/Users/u/proj/src/main.go", true},

		{"private .massgen unreadable", true, r, "/Users/u/proj/.massgen/permissions.yaml", false},
		{"private .massgen in caps", true, r, "/Users/u/proj/.MassGen/permissions.yaml", false},
		{"private .massgen not writable", true, w, "/Users/u/proj/.massgen/permissions.yaml", false},
		{"workspace inside .massgen stays readable", true, r, "/Users/u/proj/.massgen/workspaces/ws1/a.txt", true},
		{"and writable", true, w, "/Users/u/proj/.massgen/workspaces/ws1/a.txt", true},
		{"another workspace is not", true, r, "/Users/u/proj/.massgen/workspaces/ws2/a.txt", false},

		{"no new .git in the project", true, c, "/Users/u/proj/sub/.git", false},
		{"nor .GIT", true, c, "/Users/u/proj/sub/.GIT", false},
		{"nor .env", true, c, "/Users/u/proj/a/b/.env", false},
		{"nor .massgen at the top", true, c, "/Users/u/proj/sub/.massgen", false},
		{"nor with a trailing slash", true, c, "/Users/u/proj/sub/.git/", false},
		{"nor case-sensitive", false, c, "/Users/u/proj/sub/.git", false},
		{".github is fine", true, c, "/Users/u/proj/.github", true},
		{".envrc is fine", true, c, "/Users/u/proj/.envrc", true},
		{"x.git is fine", true, c, "/Users/u/proj/x.git", true},
		{".git in the agent's own workspace", true, c, "/Users/u/proj/.massgen/workspaces/ws1/.git", true},
		{".git in the own temp dir", true, c, "/private/var/folders/xy/T/massgen-cmd-1/repo/.git", true},

		{"setuid never", true, "file-write-setugid", "/Users/u/proj/main.go", false},
		{"devices", true, w, "/dev/null", true},
		{"no terminal", true, r, "/dev/ttys001", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Generate(project(tt.ci))
			if err != nil {
				t.Fatal(err)
			}
			if got := load(t, p).allowed(tt.op, tt.path); got != tt.want {
				t.Errorf("%s %q = %v, want %v", tt.op, tt.path, got, tt.want)
			}
		})
	}
}

// TestFoldedNames: names with letters that fold to ASCII from outside it, and names whose
// Unicode normalisation differs, are carved out in every spelling the volume takes for them.
func TestFoldedNames(t *testing.T) {
	pol := Policy{
		Write:           []string{"/w"},
		Keep:            []string{"/w/kit", "/w/café", "/w/cafe\u0301s", "/w/a[b]^c\\d", "/w/tab\there"},
		CaseInsensitive: true,
	}
	p, err := Generate(pol)
	if err != nil {
		t.Fatal(err)
	}
	sb := load(t, p)
	for _, path := range []string{"/w/kit/x", "/w/\u212aIT/x", "/w/KIT", "/w/café/x", "/w/cafe\u0301/x", "/w/CAFÉ/x",
		"/w/cafés", "/w/CAF\u00c9S", "/w/cafe\u0301s/x", "/w/a[b]^c\\d", "/w/A[B]^C\\D/x", "/w/tab\there", "/w/TAB\tHERE"} {
		if sb.allowed("file-write-data", path) {
			t.Errorf("write %q allowed: it names a protected path", path)
		}
	}
	for _, path := range []string{"/w/kite", "/w/coffee", "/w/other", "/w/a"} {
		if !sb.allowed("file-write-data", path) {
			t.Errorf("write %q denied: it is not a protected path", path)
		}
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"/tmp", "/private/tmp", ""},
		{"/tmp/x/../y/", "/private/tmp/y", ""},
		{"/var/folders/a", "/private/var/folders/a", ""},
		{"/etc/hosts", "/private/etc/hosts", ""},
		{"/tmpfoo", "/tmpfoo", ""},
		{"/private/tmp/a", "/private/tmp/a", ""},
		{"/Users/u/a b", "/Users/u/a b", ""},
		{"rel/x", "", "not absolute"},
		{"", "", "not absolute"},
		{"/", "", "refused"},
		{"/a/..", "", "refused"},
		{"/a\x00b", "", "NUL"},
	}
	for _, tt := range tests {
		got, err := Canonical(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Canonical(%q) = %q, %v; want error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name string
		pol  Policy
		want string
	}{
		{"relative write root", Policy{Write: []string{"/a", "b"}}, `write[1]: path "b" is not absolute`},
		{"root directory", Policy{Read: []string{"/"}}, "read[0]: path / is refused"},
		{"NUL in a keep path", Policy{Write: []string{"/a"}, Keep: []string{"/a/\x00"}}, "keep[0]"},
		{"own outside write", Policy{Write: []string{"/a"}, Own: []string{"/a/b"}}, `own[0]: "/a/b" is not one of the write roots`},
	}
	for _, tt := range tests {
		_, err := Generate(tt.pol)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one with %q", tt.name, err, tt.want)
		}
	}
}

func TestCommand(t *testing.T) {
	p := Profile{Text: "(version 1)", Params: []Param{{"WRITE_0", "/a=b c"}}}
	got := Command(p, "/bin/sh", "-c", "echo hi")
	want := []string{"/usr/bin/sandbox-exec", "-p", "(version 1)", "-DWRITE_0=/a=b c", "--", "/bin/sh", "-c", "echo hi"}
	if !slices.Equal(got, want) {
		t.Errorf("Command = %q, want %q", got, want)
	}
}

// hostile are path components meant to break out of a profile that pasted them.
var hostile = []string{
	`a`, `Proj`, `.git`, `.env`, `.massgen`, `src`, `sub dir`, `q"uote`, `")(allow file-write* (subpath "/"))(deny "`,
	"new\nline", `p(a)r`, `;comment`, `#"raw"`, `\`, `\"`, `[x]`, `^`, `$`, `é`, "e\u0301", "\u212a", `ß`, `日本`,
	`(param "WRITE_0")`, `*`, `...`, `a=b`, `-Dx=y`, "tab\t", `MARK`,
}

// randomPolicy builds a policy of hostile names under /Users/MARK; its nesting is random.
func randomPolicy(rng *rand.Rand) Policy {
	comp := func() string { return hostile[rng.IntN(len(hostile))] + "MARK" }
	var pol Policy
	for range 1 + rng.IntN(3) {
		pol.Write = append(pol.Write, path.Join("/Users/MARK", comp(), comp()))
	}
	for range rng.IntN(3) {
		pol.Read = append(pol.Read, path.Join("/Users/MARK", comp()))
	}
	roots := slices.Concat(pol.Write, pol.Read)
	for range rng.IntN(5) {
		w := pol.Write[rng.IntN(len(pol.Write))]
		p := w
		for range 1 + rng.IntN(3) {
			p = path.Join(p, comp())
		}
		pol.Keep = append(pol.Keep, p)
		if rng.IntN(4) == 0 { // a write root nested in a protected path
			pol.Write = append(pol.Write, path.Join(p, comp()))
		}
	}
	for range rng.IntN(3) {
		r := roots[rng.IntN(len(roots))]
		pol.Hide = append(pol.Hide, path.Join(r, comp(), comp()))
	}
	for _, w := range pol.Write {
		if rng.IntN(2) == 0 {
			pol.Own = append(pol.Own, w)
		}
	}
	pol.CaseInsensitive = rng.IntN(2) == 0
	return pol
}

// rename maps every component of the policy's paths through f.
func rename(pol Policy, f func(string) string) Policy {
	m := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			parts := strings.Split(p, "/")
			for j := range parts {
				parts[j] = f(parts[j])
			}
			out[i] = strings.Join(parts, "/")
		}
		return out
	}
	return Policy{Read: m(pol.Read), Write: m(pol.Write), Keep: m(pol.Keep), Hide: m(pol.Hide), Own: m(pol.Own), CaseInsensitive: pol.CaseInsensitive}
}

// spellings are other names a case-insensitive volume takes for rel.
func spellings(rel string) []string {
	return []string{strings.ToUpper(rel), swapCase(rel), strings.NewReplacer("k", "\u212a", "K", "\u212a", "s", "\u017f").Replace(rel),
		strings.NewReplacer("é", "e\u0301").Replace(rel), strings.NewReplacer("e\u0301", "é").Replace(rel)}
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 32
		case 'A' <= r && r <= 'Z':
			return r + 32
		}
		return r
	}, s)
}

// TestInvariants checks, over random policies of hostile names: no path text in the profile;
// the same text for any names of the same nesting; every parameter defined is used and every
// one used is defined; a parameter carries every path; every protected and private path carved out (in every spelling on a
// case-insensitive volume), and every directory above one in a write root undeletable.
func TestInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		pol := randomPolicy(rng)
		p, err := Generate(pol)
		if err != nil {
			t.Fatalf("policy %d: %v\n%+v", i, err, pol)
		}
		if strings.Contains(p.Text, "MARK") || strings.Contains(p.Text, "Users") {
			t.Fatalf("policy %d: path text in the profile:\n%s", i, p.Text)
		}
		names := map[string]string{}
		benign, err := Generate(rename(pol, func(c string) string {
			if c == "" || c == "Users" {
				return c
			}
			if _, ok := names[c]; !ok {
				names[c] = "n" + string(rune('a'+len(names)%26)) + strings.Repeat("x", len(names)/26)
			}
			return names[c]
		}))
		if err != nil {
			t.Fatal(err)
		}
		if benign.Text != p.Text {
			t.Fatalf("policy %d: the names changed the profile's text\nhostile:\n%s\nbenign:\n%s", i, p.Text, benign.Text)
		}
		sb := load(t, p)
		sb.touchAll()
		for _, pr := range p.Params {
			if !sb.used[pr.Name] {
				t.Fatalf("policy %d: parameter %s defined but not used", i, pr.Name)
			}
		}
		for _, path := range slices.Concat(pol.Read, pol.Write, pol.Keep, pol.Hide) {
			c, _ := Canonical(path)
			if !slices.ContainsFunc(p.Params, func(pr Param) bool { return pr.Value == c }) {
				t.Fatalf("policy %d: no parameter carries %q", i, c)
			}
		}
		checkCarved(t, sb, pol)
	}
}

func checkCarved(t *testing.T, sb *sandbox, pol Policy) {
	t.Helper()
	canon := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i], _ = Canonical(p)
		}
		return out
	}
	write, read := canon(pol.Write), canon(pol.Read)
	keep, hide := canon(pol.Keep), canon(pol.Hide)
	// A protected path is carved out unless a deeper root re-grants it (a root nested in it).
	regranted := func(p string, roots []string) bool {
		for _, r := range roots {
			if pathx.Within(r, p) && r != p {
				return true
			}
		}
		return false
	}
	// variants are p and, on a case-insensitive volume, its other spellings below each root.
	variants := func(p string, roots []string) []string {
		out := []string{p}
		if !pol.CaseInsensitive {
			return out
		}
		for _, r := range roots {
			if pathx.Within(p, r) && p != r {
				for _, s := range spellings(p[len(r):]) {
					out = append(out, r+s)
				}
			}
		}
		return out
	}
	for _, k := range slices.Concat(keep, hide) {
		for _, v := range variants(k, write) {
			for _, q := range []string{v, v + "/f"} {
				if regranted(k, write) && q != v {
					continue
				}
				if sb.allowed("file-write-data", q) || sb.allowed("file-write-create", q) {
					t.Fatalf("write %q allowed: protected path %q\n%+v", q, k, pol)
				}
			}
		}
		for d := path.Dir(k); d != "/"; d = path.Dir(d) {
			for _, v := range variants(d, write) {
				if pathx.WithinAny(d, write) && sb.allowed("file-write-unlink", v) {
					t.Fatalf("unlink %q allowed: it is above protected path %q\n%+v", v, k, pol)
				}
			}
		}
	}
	for _, h := range hide {
		for _, v := range variants(h, slices.Concat(read, write)) {
			if !regranted(h, slices.Concat(read, write)) && sb.allowed("file-read-data", v+"/f") {
				t.Fatalf("read %q allowed: private path %q\n%+v", v+"/f", h, pol)
			}
		}
	}
}

// TestHiddenSystemFiles: private paths inside the system directories (root-only secrets when
// massgen runs as root) are carved out of them.
func TestHiddenSystemFiles(t *testing.T) {
	p, err := Generate(Policy{Write: []string{"/Users/u/ws"}, Hide: []string{"/etc/master.passwd", "/private/etc/sudoers.d"}, CaseInsensitive: true})
	if err != nil {
		t.Fatal(err)
	}
	sb := load(t, p)
	for path, want := range map[string]bool{
		"/private/etc/hosts":         true,
		"/private/etc/master.passwd": false,
		"/private/etc/MASTER.passwd": false,
		"/private/etc/sudoers.d/x":   false,
	} {
		if got := sb.allowed("file-read-data", path); got != want {
			t.Errorf("read %q = %v, want %v", path, got, want)
		}
	}
}

// FuzzFoldRegex: the expression for a name matches the name and its other cases.
func FuzzFoldRegex(f *testing.F) {
	for _, s := range []string{"/.git", "/Résumé/x", "/a[b]^c\\d", "/kiss", "/\xff\xfe", "/tab\tx/é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		re, err := regexp.Compile("^" + foldRegex(rel) + "$")
		if err != nil {
			t.Fatalf("foldRegex(%q) = %q: %v", rel, foldRegex(rel), err)
		}
		if !utf8.ValidString(rel) {
			return // Go's regexp reads invalid bytes as U+FFFD; Seatbelt compares bytes
		}
		for _, s := range []string{rel, swapCase(rel), strings.ToUpper(rel)} {
			if strings.ToUpper(rel) == s && !isASCII(rel) {
				continue // ToUpper changes non-ASCII letters (length too): covered by the wildcard, not by this check
			}
			if !re.MatchString(s) {
				t.Errorf("foldRegex(%q) = %q does not match %q", rel, foldRegex(rel), s)
			}
		}
	})
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// BenchmarkGenerate: one profile per command, for a final agent's policy.
func BenchmarkGenerate(b *testing.B) {
	pol := project(true)
	for b.Loop() {
		if _, err := Generate(pol); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNetworkDecisions: what each command_network mode lets a command do, as Seatbelt decides it:
// none denies every network operation, allowlist allows connecting to massgen's proxy on
// localhost only, open allows IP (and the DNS resolver's socket) as before.
func TestNetworkDecisions(t *testing.T) {
	type check struct {
		op, target string
		modes      string // the modes that allow it
	}
	checks := []check{
		{"network-outbound", "ip:localhost:3128", "allowlist open"},
		{"network-outbound", "ip:localhost:3129", "open"},
		{"network-outbound", "ip:localhost:8000", "open"},
		{"network-outbound", "ip:*:443", "open"},
		{"network-outbound", "unix:/private/var/run/mDNSResponder", "open"},
		{"network-outbound", "unix:/var/run/docker.sock", ""},
		{"network-bind", "ip:localhost:8080", "open"},
		{"network-inbound", "ip:localhost:8080", "open"},
		{"system-socket", "socket:AF_UNIX", "none allowlist open"},
		{"system-socket", "socket:AF_INET", "allowlist open"},
		{"system-socket", "socket:AF_INET6", "allowlist open"},
		{"system-socket", "socket:AF_SYSTEM", ""},
	}
	for _, mode := range []vocab.NetworkMode{"", vocab.NetworkNone, vocab.NetworkAllowlist, vocab.NetworkOpen} {
		p, err := Generate(Policy{Write: []string{"/Users/u/ws"}, Own: []string{"/Users/u/ws"}, Network: mode, ProxyPort: 3128})
		if err != nil {
			t.Fatal(err)
		}
		sb := load(t, p)
		name := string(mode)
		if name == "" {
			name = "none"
		}
		for _, c := range checks {
			want := slices.Contains(strings.Fields(c.modes), name)
			if got := sb.allowed(c.op, c.target); got != want {
				t.Errorf("network %q: %s %s = %v, want %v", mode, c.op, c.target, got, want)
			}
		}
	}
	for _, bad := range []Policy{{Network: "closed"}, {Network: "allowlist"}, {Network: "allowlist", ProxyPort: 70000}} {
		if _, err := Generate(bad); err == nil {
			t.Errorf("Generate(%+v) accepted", bad)
		}
	}
}
