// Package seatbelt writes the macOS Seatbelt profile (for /usr/bin/sandbox-exec) that confines
// one agent command, from the same policy the Linux sandboxes get. It is pure string building,
// tested on any system; running the profile is the sandbox package's job (seatbelt_darwin.go).
//
// The profile is closed by default and grants:
//   - read, execute and map: the system directories a shell needs (SystemReadDirs), the read
//     roots and the write roots, minus the Hide paths (private paths) inside each;
//   - write: the write roots, minus the Keep paths (protected and excluded paths) and the Hide
//     paths inside each, carved out with require-not;
//   - the network of Policy.Network: none at all (the default), massgen's proxy on
//     localhost:ProxyPort only (allowlist), or any (open);
//   - nothing else, and then takes back (denies come last: Seatbelt's last matching rule wins):
//     unlinking or renaming any directory above a Keep or Hide path that lies in a write root
//     (moving it would carry the protected path out of its carve-out), creating a .git, .env
//     or .massgen entry anywhere in a write root that is not the agent's own (Policy.Own), and
//     setting setuid or setgid bits.
//
// Every path reaches the profile as a -D parameter, referenced by name ((param "WRITE_0")),
// never as text of the profile: the profile's text depends only on how many paths there are
// and how they nest, so no path name (quotes, parentheses, newlines) can change what it says.
//
// Case: on a case-insensitive volume (APFS's default) `.GIT` names the same entry as `.git`, and
// Seatbelt compares the path a process spelled. With Policy.CaseInsensitive every carve-out and
// deny below a root is also matched by a regular expression that accepts every case of each
// ASCII letter, written as explicit alternatives ([gG], and (k|K|K) for letters with a
// non-ASCII fold such as the Kelvin sign) rather than an (?i) flag, whose support in Seatbelt's
// regex engine is not documented. A name's non-ASCII part (whose case and Unicode normalisation
// APFS also ignores) and the characters [ ] \ ^ are matched by [^/][^/]* (with the ASCII letter
// just before, which may be the base of a decomposed character): such a carve-out is wider than
// the path, never narrower. The expression is built here and passed as a parameter too; the
// root in front of it is quoted by Seatbelt itself (regex-quote). Not covered: full case
// folding that turns one character into several (ß and ss, the ﬁ ligature).
package seatbelt

import (
	_ "embed"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/vocab"
)

// SandboxExec is the only sandbox-exec used: one found on PATH could be anybody's.
const SandboxExec = "/usr/bin/sandbox-exec"

//go:embed base.sb
var baseProfile string

// SystemReadDirs are readable and executable for every command: the shell and its tools, their
// libraries and configuration (/private/etc), the developer tools behind /usr/bin/git and cc,
// Homebrew (/opt/homebrew; /usr/local is under /usr), /bin/sh's choice of shell
// (/private/var/select) and the resolver configuration. The user's home, /Users, /Volumes and
// the temporary directories are not among them.
func SystemReadDirs() []string {
	return []string{"/usr", "/bin", "/sbin", "/System", "/Library/Apple", "/Library/Developer/CommandLineTools",
		"/Library/Frameworks", "/Library/Preferences", "/Applications", "/opt", "/private/etc",
		"/private/var/select", "/private/var/db/timezone", "/private/var/db/dyld",
		"/private/var/db/xcode_select_link", "/private/var/run/resolv.conf"}
}

// systemNames are created nowhere in a write root but the agent's own: .git (hooks run code in
// the user's next git command), .env (read by the next massgen run) and .massgen (project rules).
var systemNames = [...]string{"git", "env", strings.TrimPrefix(layout.DirName, ".")}

// Policy is what the command may touch. Paths are absolute, resolved (no symbolic link on the
// way, which Seatbelt would not follow either) and may be files or directories. /tmp, /var
// and /etc are taken as their /private/... targets.
type Policy struct {
	Read  []string // readable and executable roots
	Write []string // writable roots (readable too)
	Keep  []string // paths in write roots that stay read-only (protected and excluded paths)
	Hide  []string // paths that are neither readable nor writable (private paths)
	// Own are write roots that belong to the agent (its workspace, its temporary directory):
	// .git, .env and .massgen may be created there. Each must also be in Write.
	Own []string
	// CaseInsensitive says that names below the roots compare without case (the volume is
	// case-insensitive: APFS's default on macOS). Carve-outs and denies then match every case.
	CaseInsensitive bool
	// Network is none ("" too), allowlist (massgen's proxy on localhost:ProxyPort only) or
	// open.
	Network   vocab.NetworkMode
	ProxyPort int
}

// Param is one -D NAME=VALUE of sandbox-exec.
type Param struct{ Name, Value string }

// Profile is a generated profile: its text and the parameters it refers to.
type Profile struct {
	Text   string
	Params []Param
}

// Args are sandbox-exec's options for the profile: -p TEXT and one -DNAME=VALUE per parameter.
func (p Profile) Args() []string {
	args := []string{"-p", p.Text}
	for _, pr := range p.Params {
		args = append(args, "-D"+pr.Name+"="+pr.Value)
	}
	return args
}

// Command is the full argv that runs argv under the profile.
func Command(p Profile, argv ...string) []string {
	out := append([]string{SandboxExec}, p.Args()...)
	out = append(out, "--")
	return append(out, argv...)
}

// Canonical returns p clean, with /tmp, /var and /etc replaced by the /private/... directories
// they link to on macOS (Seatbelt sees the resolved path). It refuses relative paths, NUL bytes
// (which cannot pass through argv) and the root directory itself (a root of / would grant
// everything).
func Canonical(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	if !path.IsAbs(p) {
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	p = path.Clean(p)
	if p == "/" {
		return "", errors.New("path / is refused: a sandbox root must be a directory below it")
	}
	for _, d := range []string{"/tmp", "/var", "/etc"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return "/private" + p, nil
		}
	}
	return p, nil
}

// entry is a path of the policy and the parameter that carries it.
type entry struct {
	param string
	path  string
}

// gen builds one profile.
type gen struct {
	b      strings.Builder
	params []Param
	ci     bool
}

// define adds the parameter name (once: a carve-out shared by the read and write rules
// defines its expression twice, with the same value).
func (g *gen) define(name, value string) string {
	for _, p := range g.params {
		if p.Name == name {
			if p.Value != value {
				panic("seatbelt: parameter " + name + " defined twice with different values")
			}
			return name
		}
	}
	g.params = append(g.params, Param{name, value})
	return name
}

// canonical canonicalises a list of the policy and drops repeats and the paths in skip.
func canonical(list string, paths []string, skip map[string]bool) ([]string, error) {
	var out []string
	for i, p := range paths {
		c, err := Canonical(p)
		if err != nil {
			return nil, fmt.Errorf("seatbelt: %s[%d]: %w", list, i, err)
		}
		if !skip[c] && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// entries names each path's parameter prefix_i.
func (g *gen) entries(paths []string, prefix string) []entry {
	out := make([]entry, len(paths))
	for i, p := range paths {
		out[i] = entry{g.define(prefix+"_"+strconv.Itoa(i), p), p}
	}
	return out
}

// Generate writes the profile for pol.
func Generate(pol Policy) (Profile, error) {
	writes, err := canonical("write", pol.Write, nil)
	if err != nil {
		return Profile{}, err
	}
	inWrite := map[string]bool{}
	for _, w := range writes {
		inWrite[w] = true
	}
	systems, err := canonical("system", SystemReadDirs(), inWrite)
	if err != nil {
		return Profile{}, err
	}
	reads, err := canonical("read", pol.Read, inWrite)
	if err != nil {
		return Profile{}, err
	}
	keeps, err := canonical("keep", pol.Keep, nil)
	if err != nil {
		return Profile{}, err
	}
	hides, err := canonical("hide", pol.Hide, nil)
	if err != nil {
		return Profile{}, err
	}
	own := map[string]bool{}
	for i, p := range pol.Own {
		c, err := Canonical(p)
		if err != nil {
			return Profile{}, fmt.Errorf("seatbelt: own[%d]: %w", i, err)
		}
		if !inWrite[c] {
			return Profile{}, fmt.Errorf("seatbelt: own[%d]: %q is not one of the write roots", i, p)
		}
		own[c] = true
	}
	g := &gen{ci: pol.CaseInsensitive}
	sys, read, write := g.entries(systems, "SYSTEM"), g.entries(reads, "READ"), g.entries(writes, "WRITE")
	keep, hide := g.entries(keeps, "KEEP"), g.entries(hides, "HIDE")

	g.b.WriteString(baseProfile)
	if err := g.network(pol.Network, pol.ProxyPort); err != nil {
		return Profile{}, err
	}
	readRoots := slices.Concat(sys, read, write)

	g.b.WriteString("\n; Directories above the roots: their metadata only, for getcwd and realpath.\n(allow file-read-metadata")
	for _, r := range readRoots {
		fmt.Fprintf(&g.b, "\n  (path-ancestors (param %q))", r.param)
	}
	g.b.WriteString(")\n")

	g.b.WriteString("\n; Read: system directories, read roots and write roots, minus the private paths in each.\n(allow file-read* file-test-existence file-map-executable")
	for _, r := range readRoots {
		g.rootFilter(r, hide)
	}
	g.b.WriteString(")\n")

	if len(write) > 0 {
		g.b.WriteString("\n; Write: the write roots, minus the protected, excluded and private paths in each.\n(allow file-write*")
		protected := slices.Concat(keep, hide)
		for _, w := range write {
			g.rootFilter(w, protected)
		}
		g.b.WriteString(")\n")
		g.ancestorDenies(write, slices.Concat(keep, hide))
		g.systemNameDenies(write, own)
	}
	g.b.WriteString("\n; No setuid or setgid files, even when massgen runs as root.\n(deny file-write-setugid)\n")
	return Profile{Text: g.b.String(), Params: g.params}, nil
}

// network writes the network rules. The proxy's port is a number massgen chose, the only value
// written into the profile's text.
func (g *gen) network(mode vocab.NetworkMode, port int) error {
	switch mode {
	case "", vocab.NetworkNone:
		g.b.WriteString(`
; Network: none (command_network mode none). UNIX sockets can be created (socketpair) but
; neither bound nor connected; no IP socket, no name resolution (the resolver's socket is
; not reachable either).
(allow system-socket (socket-domain AF_UNIX))
(deny network*)
`)
	case vocab.NetworkAllowlist:
		if port < 1 || port > 65535 {
			return fmt.Errorf("seatbelt: network allowlist: bad proxy port %d", port)
		}
		fmt.Fprintf(&g.b, `
; Network: massgen's proxy only (command_network mode allowlist), which lets through the hosts
; of allowed_domains. No other connection, no bind, no name resolution: the proxy resolves.
(allow system-socket (socket-domain AF_INET) (socket-domain AF_INET6) (socket-domain AF_UNIX))
(deny network*)
(allow network-outbound (remote ip "localhost:%d"))
`, port)
	case vocab.NetworkOpen:
		g.b.WriteString(`
; Network: any (command_network mode open), IP only, as on Linux. UNIX sockets can be created
; (socketpair) but neither bound nor connected, except the system DNS resolver's, without which
; no host name resolves.
(allow system-socket (socket-domain AF_INET) (socket-domain AF_INET6) (socket-domain AF_UNIX))
(allow network-outbound (remote ip "*:*"))
(allow network-inbound (local ip "*:*"))
(allow network-bind (local ip "*:*"))
(allow network-outbound (remote unix-socket (subpath "/private/var/run/mDNSResponder")))
`)
	default:
		return fmt.Errorf("seatbelt: unknown network mode %q", mode)
	}
	return nil
}

// rootFilter writes the filter for root minus the paths of carve that lie in it.
func (g *gen) rootFilter(root entry, carve []entry) {
	var in []entry
	for _, c := range carve {
		if pathx.Within(c.path, root.path) {
			in = append(in, c)
		}
	}
	if len(in) == 0 {
		fmt.Fprintf(&g.b, "\n  (subpath (param %q))", root.param)
		return
	}
	fmt.Fprintf(&g.b, "\n  (require-all (subpath (param %q))", root.param)
	for _, c := range in {
		fmt.Fprintf(&g.b, "\n    (require-not (literal (param %q))) (require-not (subpath (param %q)))", c.param, c.param)
		if g.ci && c.path != root.path {
			re := g.define(root.param+"_"+c.param+"_RE", foldRegex(c.path[len(root.path):])+"(/.*)?$")
			g.b.WriteString("\n    " + notRegex(root.param, re))
		}
	}
	g.b.WriteString(")")
}

// ancestorDenies forbids unlinking or renaming the directories above each protected path that
// lie in a write root (the root itself included): `mv proj other` would otherwise take
// proj/.git out of its carve-out.
func (g *gen) ancestorDenies(write, protected []entry) {
	type pair struct{ root, dir string }
	seen := map[pair]bool{}
	anc := map[string]string{} // ancestor path -> its parameter
	var filters []string
	for _, p := range protected {
		for d := path.Dir(p.path); d != "/"; d = path.Dir(d) {
			for _, w := range write {
				if !pathx.Within(d, w.path) || seen[pair{w.path, d}] {
					continue
				}
				seen[pair{w.path, d}] = true
				if d == w.path {
					filters = append(filters, fmt.Sprintf("(literal (param %q))", w.param))
					continue
				}
				name, ok := anc[d]
				if !ok {
					name = g.define("ANCESTOR_"+strconv.Itoa(len(anc)), d)
					anc[d] = name
					filters = append(filters, fmt.Sprintf("(literal (param %q))", name))
				}
				if g.ci {
					re := g.define(w.param+"_"+name+"_RE", foldRegex(d[len(w.path):])+"/?$")
					filters = append(filters, rootRegex(w.param, re))
				}
			}
		}
	}
	if len(filters) == 0 {
		return
	}
	g.b.WriteString("\n; Directories above protected and private paths in write roots: no unlink, no rename.\n(deny file-write-unlink")
	for _, f := range filters {
		g.b.WriteString("\n  " + f)
	}
	g.b.WriteString(")\n")
}

// systemNameDenies forbids creating .git, .env and .massgen in write roots other than the
// agent's own (and own roots nested in them).
func (g *gen) systemNameDenies(write []entry, own map[string]bool) {
	var names string
	for _, w := range write {
		if own[w.path] {
			continue
		}
		if names == "" {
			names = g.define("SYSTEM_NAMES_RE", systemNamesRegex(g.ci))
			g.b.WriteString("\n; No new .git, .env or .massgen outside the agent's own roots.\n(deny file-write-create")
		}
		var mine []entry
		for _, o := range write {
			if own[o.path] && o.path != w.path && pathx.Within(o.path, w.path) {
				mine = append(mine, o)
			}
		}
		if len(mine) == 0 {
			g.b.WriteString("\n  " + rootRegex(w.param, names))
			continue
		}
		g.b.WriteString("\n  (require-all " + rootRegex(w.param, names))
		for _, o := range mine {
			// Exact, not case-folded: a wider exception would narrow the deny.
			fmt.Fprintf(&g.b, "\n    (require-not (subpath (param %q)))", o.param)
		}
		g.b.WriteString(")")
	}
	if names != "" {
		g.b.WriteString(")\n")
	}
}

// rootRegex matches the root's path (quoted by Seatbelt) followed by the expression in param re.
func rootRegex(root, re string) string {
	return fmt.Sprintf("(regex (string-append \"^\" (regex-quote (param %q)) (param %q)))", root, re)
}

func notRegex(root, re string) string { return "(require-not " + rootRegex(root, re) + ")" }

// systemNamesRegex matches a .git, .env or .massgen entry at any depth below a root.
func systemNamesRegex(ci bool) string {
	alts := make([]string, len(systemNames))
	for i, n := range systemNames {
		alts[i] = n
		if ci {
			alts[i] = foldRegex(n)
		}
	}
	return "/(.*/)?[.](" + strings.Join(alts, "|") + ")/?$"
}

// safePunct are the ASCII characters written as a one-character class ([.]): literal there in
// every regex dialect. The rest ([ ] \ ^, control characters, non-ASCII) are matched wide.
const safePunct = " !\"#$%&'()*+,-.:;<=>?@_`{|}~"

// foldRegex turns a path below a root ("/proj/.git") into a regular expression matching every
// spelling a case-insensitive, normalisation-insensitive volume takes for the same entry (and
// possibly more, never less). See the package comment.
func foldRegex(rel string) string {
	rs := []rune(rel)
	wide := func(r rune) bool {
		return r >= utf8.RuneSelf || r < 0x20 || r == 0x7f || !(isASCIIAlnum(r) || r == '/' || strings.ContainsRune(safePunct, r))
	}
	// base: an ASCII character right before a non-ASCII one may be the base of a character
	// that another normalisation writes precomposed.
	base := func(i int) bool { return rs[i] != '/' && i+1 < len(rs) && rs[i+1] >= utf8.RuneSelf }
	var b strings.Builder
	for i := 0; i < len(rs); {
		if wide(rs[i]) || base(i) {
			for i < len(rs) && rs[i] != '/' && (wide(rs[i]) || base(i)) {
				i++
			}
			b.WriteString("[^/][^/]*")
			continue
		}
		r := rs[i]
		switch {
		case r == '/' || '0' <= r && r <= '9':
			b.WriteRune(r)
		case isASCIIAlnum(r):
			b.WriteString(foldLetter(r))
		default:
			b.WriteString("[" + string(r) + "]")
		}
		i++
	}
	return b.String()
}

// foldLetter matches every case of an ASCII letter: [aA], or (K|k|K) when a non-ASCII
// character folds to it too (the Kelvin sign, the long s).
func foldLetter(r rune) string {
	orbit := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	slices.Sort(orbit)
	if len(orbit) == 2 && orbit[1] < utf8.RuneSelf {
		return "[" + string(orbit) + "]"
	}
	alts := make([]string, len(orbit))
	for i, f := range orbit {
		alts[i] = string(f)
	}
	return "(" + strings.Join(alts, "|") + ")"
}

func isASCIIAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}
