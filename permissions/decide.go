package permissions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/internal/winpath"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// maxGlobMatches bounds the files the command globs of one call may expand to before the call is
// refused; maxGlobScan bounds the directory entries looked at to find them (a pattern such as
// /*/*/*/* would otherwise walk the whole disk before any count is known).
const (
	maxGlobMatches = 4096
	maxGlobScan    = 1 << 16
)

// globBudget is what is left for the globs of one decision.
type globBudget struct{ matches, scan int }

// Decide judges one tool call. It is pure apart from stat/readlink (and reading directories for
// command globs): no asks, no hooks, no writes. In mode "default" it may return Ask.
func (p *Policy) Decide(r Request) Decision {
	d, _ := p.decide(r)
	return WithRule(d)
}

// DecideWithPaths is Decide with the canonical paths the call names: the Guard
// (permissions/guard) keys its "allow for this run" grants on them, shows them when it asks and
// writes them to the audit log.
func (p *Policy) DecideWithPaths(r Request) (Decision, []string) {
	d, info := p.decide(r)
	return WithRule(d), info.paths
}

// WithRule ends a deny reason with the rule id, which docs/permissions.md explains. The Guard
// ends the reasons of its own decisions (asks, hooks) the same way.
func WithRule(d Decision) Decision {
	if !d.Allow && !d.Ask && d.Rule != "" && !strings.Contains(d.Reason, "[rule: ") {
		d.Reason += " [rule: " + string(d.Rule) + "]"
	}
	return d
}

// decideInfo carries what DecideWithPaths returns besides the decision.
type decideInfo struct {
	paths []string
}

func (p *Policy) decide(r Request) (Decision, decideInfo) {
	var info decideInfo
	if toolargs.IsWorkflow(r.Tool) {
		return Decision{Allow: true, Rule: RuleWorkflowTool, Reason: r.Tool + " is a coordination tool"}, info
	}
	bypass := p.spec.Mode == ModeBypass
	ex, err := extractWith(r.Decl, p.spec.Tools, r.Tool, r.Args, !p.spec.Sandboxed)
	if err == nil && len(ex.paths) > toolargs.MaxArgPaths+maxCommandWords {
		err = fmt.Errorf("%w: %s has %d paths to check", errTooLarge, r.Tool, len(ex.paths))
	}
	res := r.Resolver
	if res == nil {
		res = p.strRes()
	}
	call := &ruleCall{tool: r.Tool, decl: r.Decl, fold: p.flav == windowsPaths}
	if call.decl == nil {
		if d, ok := p.spec.Tools.Known(r.Tool); ok {
			call.decl = &d
		}
	}
	if err == nil {
		call.command = ex.command
	}
	if !bypass {
		// Deny rules are checked on what can be known even when extraction failed.
		if len(p.deny) > 0 {
			if err == nil {
				p.fillRuleCall(call, ex, r.Args, res)
			} else {
				collectStrings(r.Args, &call.strings)
			}
		}
		for _, rl := range p.deny {
			if rl.matches(call, false) {
				return Decision{Rule: RuleDenyRule, Reason: fmt.Sprintf("Access denied: %s is denied by the rule %q", r.Tool, rl.text)}, info
			}
		}
	}
	if err != nil {
		if errors.Is(err, errDangerous) {
			return Decision{Rule: RuleDangerousCommand, Reason: "Access denied: " + err.Error()}, info
		}
		if errors.Is(err, errTooLarge) {
			return Decision{Rule: RuleTooLarge, Reason: "Access denied: " + err.Error() +
				" (the check refuses what it cannot judge quickly; split the call or write the paths out)"}, info
		}
		if isNoPath(err) && !bypass {
			for _, rl := range p.allow {
				if !rl.hasArgs && rl.matchesTool(call) {
					return Decision{Allow: true, Rule: RuleAllowRule, Reason: fmt.Sprintf("%s takes no path and is allowed by the rule %q", r.Tool, rl.text)}, info
				}
			}
		}
		return Decision{Rule: RuleCannotDetermine, Reason: "Access denied: " + err.Error() + " (calls that cannot be judged are refused)"}, info
	}
	if ex.cmd != nil && p.flav == windowsPaths {
		if d, refused := p.windowsCommand(call, ex, r, res); refused {
			return d, info
		}
	}
	if ex.cmd != nil && !p.spec.Sandboxed && len(ex.cmd.Dynamic) > 0 {
		return Decision{Rule: RuleCommandExpansion, Reason: fmt.Sprintf(
			"Access denied: the command uses %s; without the kernel sandbox, shell expansions are refused because they hide the paths a command touches (write the paths literally)",
			ex.cmd.Dynamic[0])}, info
	}
	if ex.cmd != nil && !p.spec.Sandboxed && len(ex.cmd.Inline) > 0 && !p.allowedByRule(call, ex, r.Args, res) {
		return Decision{Rule: RuleInlineCode, Reason: fmt.Sprintf(
			"Access denied: the command runs program text the check cannot see (%s); without the kernel sandbox that is refused unless a rule in permissions.allow covers the command, e.g. %q",
			ex.cmd.Inline[0], r.Tool+"("+firstWord(ex.command)+" *)")}, info
	}
	budget := &globBudget{matches: maxGlobMatches, scan: maxGlobScan}
	var last Decision
	askContext := false
	for i, pa := range ex.paths {
		rv := res
		if i >= ex.declared {
			rv = p.strRes() // a command's words: the sandbox acts, by string
		}
		acc := pa.Access
		var d Decision
		var m *managed
		if pa.Glob {
			d, m = p.checkGlob(pa, acc, budget)
		} else {
			d, m = p.checkPath(rv, pa.Arg, pa.Path, acc)
			if d.Allow && acc == Delete {
				d = p.checkRemoval(d)
			}
		}
		info.paths = append(info.paths, d.Path)
		if !d.Allow {
			if pa.Arg != "" && !strings.Contains(d.Reason, pa.Arg) {
				d.Reason += fmt.Sprintf(" [argument %s of %s]", pa.Arg, r.Tool)
			}
			return d, info
		}
		if acc != Read && m != nil && m.kind == kindContext {
			askContext = true
		}
		last = d
	}
	if len(ex.paths) == 0 {
		last = Decision{Allow: true, Rule: RuleNoPaths, Reason: r.Tool + " touches no files"}
	}
	if p.spec.Mode == ModeDefault {
		isCmd := ex.cmd != nil
		if (askContext && p.spec.Role == Final) || isCmd {
			if call.groups == nil && call.strings == nil {
				p.fillRuleCall(call, ex, r.Args, res)
			}
			for _, rl := range p.allow {
				if rl.matches(call, true) {
					last.Rule, last.Reason = RuleAllowRule, fmt.Sprintf("allowed by the rule %q", rl.text)
					return last, info
				}
			}
			what := "write to a context path"
			if isCmd {
				what = "run a command"
			}
			return Decision{Ask: true, Path: last.Path, Access: last.Access, Rule: RuleAsk,
				Reason: fmt.Sprintf("permission mode \"default\": %s needs the user's confirmation to %s", r.Tool, what)}, info
		}
	}
	return last, info
}

// checkRemoval refuses removing or moving, as a whole, a managed root or a directory that holds
// protected or read-only paths. d is an allowed write or delete decision.
func (p *Policy) checkRemoval(d Decision) Decision {
	if rm := p.rootAt(d.Path); rm != nil && !rm.file {
		return Decision{Path: d.Path, Access: d.Access, Rule: RuleManagedRoot, Reason: fmt.Sprintf(
			"Access denied: '%s' is the root of the agent's %s; it cannot be deleted or moved", d.Path, rm.kind.label())}
	}
	if _, ok := p.restrictedAt(d.Path); ok {
		return Decision{Path: d.Path, Access: d.Access, Rule: RuleContainsReadOnly, Reason: fmt.Sprintf(
			"Access denied: '%s' contains protected or read-only paths; deleting or moving it as a whole is refused", d.Path)}
	}
	return d
}

// checkGlob checks a command word with glob characters: the directory the pattern lives in,
// then every match (each removed as a whole for Delete).
func (p *Policy) checkGlob(pa PathAccess, acc Access, budget *globBudget) (Decision, *managed) {
	if p.flav == windowsPaths {
		// Patterns are expanded by the program on Windows, by its own rules: not judged.
		return deny(pa.Path, acc, RuleUnresolvable, fmt.Sprintf(
			"Access denied: %q is a wildcard pattern; on Windows patterns are not checked (write the paths out)", pa.Path)), nil
	}
	abs, err := absolute(pa.Path, p.workspace, p.home)
	if err != nil {
		return deny(pa.Path, acc, RuleUnresolvable, "Access denied: "+err.Error()), nil
	}
	static := abs
	if i := strings.IndexAny(abs, "*?["); i >= 0 {
		static = abs[:i]
		if j := strings.LastIndexByte(static, '/'); j >= 0 {
			static = static[:j+1]
		}
	}
	res := p.strRes()
	// Reading a pattern lists its directory; writing it creates the literal name when nothing
	// matches. Then every match is judged on its own (symlinks included).
	d, m := p.checkPath(res, pa.Arg, strings.TrimSuffix(static, "/")+"/", Read)
	if d.Allow && acc != Read {
		d, m = p.checkPath(res, pa.Arg, abs, Write)
	}
	if !d.Allow {
		return d, m
	}
	matches, err := boundedGlob(abs, budget)
	if errors.Is(err, errTooLarge) {
		return deny(pa.Path, acc, RuleGlobTooLarge, fmt.Sprintf("Access denied: %q matches more than %d files to check (%v)", pa.Path, maxGlobMatches, err)), nil
	}
	if err != nil {
		return deny(pa.Path, acc, RuleUnresolvable, fmt.Sprintf("Access denied: bad glob %q: %v", pa.Path, err)), nil
	}
	for _, mt := range matches {
		// A removed match is an entry: a link goes, its target stays.
		d2, m2 := p.checkPath(res, pa.Arg, mt, acc)
		if d2.Allow && acc == Delete {
			d2 = p.checkRemoval(d2)
		}
		if !d2.Allow {
			return d2, m2
		}
	}
	return d, m
}

// allowedByRule reports whether an allow rule covers the call (rules are read in every mode here:
// they lift a refusal of the command check, they never widen the path rules).
func (p *Policy) allowedByRule(call *ruleCall, ex *extraction, args map[string]any, res Resolver) bool {
	if len(p.allow) == 0 {
		return false
	}
	if call.groups == nil && call.strings == nil {
		p.fillRuleCall(call, ex, args, res)
	}
	for _, rl := range p.allow {
		if rl.hasArgs && rl.matches(call, true) {
			return true
		}
	}
	return false
}

func firstWord(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return "*"
	}
	return f[0]
}

// boundedGlob is filepath.Glob with a budget: it stops with errTooLarge once the globs of one
// decision have looked at too many directory entries or produced too many matches.
func boundedGlob(pattern string, b *globBudget) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	comps := strings.Split(pattern, "/")
	cur := []string{"/"}
	for _, c := range comps {
		if c == "" {
			continue
		}
		var next []string
		if !strings.ContainsAny(c, "*?[\\") {
			for _, d := range cur {
				next = append(next, joinClean(d, c))
			}
			cur = next
			continue
		}
		for _, d := range cur {
			names, err := readNames(d, b)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				if ok, _ := filepath.Match(c, n); ok {
					if b.matches--; b.matches < 0 {
						return nil, fmt.Errorf("%w: more than %d matches", errTooLarge, maxGlobMatches)
					}
					next = append(next, joinClean(d, n))
				}
			}
		}
		cur = next
		if len(cur) == 0 {
			return nil, nil
		}
	}
	// Like filepath.Glob: only names that exist.
	out := cur[:0]
	for _, m := range cur {
		if b.scan--; b.scan < 0 {
			return nil, fmt.Errorf("%w: more than %d directory entries to look at", errTooLarge, maxGlobScan)
		}
		if _, err := os.Lstat(m); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// readNames lists a directory in chunks, charging each entry to the budget. A directory that
// cannot be read has no matches (as with filepath.Glob).
func readNames(dir string, b *globBudget) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	var names []string
	for {
		chunk, err := f.Readdirnames(256)
		b.scan -= len(chunk)
		if b.scan < 0 {
			return nil, fmt.Errorf("%w: more than %d directory entries to look at", errTooLarge, maxGlobScan)
		}
		names = append(names, chunk...)
		if err != nil || len(chunk) == 0 {
			break
		}
	}
	slices.Sort(names)
	return names, nil
}

func (p *Policy) fillRuleCall(c *ruleCall, ex *extraction, args map[string]any, rv Resolver) {
	for i, pa := range ex.paths {
		g := []string{pa.Path}
		r := rv
		if i >= ex.declared {
			r = p.strRes()
		}
		if res, err := p.resolveArg(r, pa); err == nil {
			g = append(g, res)
			if p.workspace != "" && p.flav.within(res, p.workspace) && res != p.workspace {
				g = append(g, p.flav.rel(res, p.workspace))
			}
			for q := res; !p.flav.isRoot(q); q = p.flav.parent(q) {
				if m := p.rootAt(q); m != nil && m.kind == kindContext && q != res {
					g = append(g, p.flav.rel(res, q))
					break
				}
			}
		}
		if c.fold {
			for i, s := range g {
				g[i] = winpath.Fold(strings.ReplaceAll(s, `\`, "/"))
			}
		}
		c.groups = append(c.groups, g)
	}
	collectStrings(args, &c.strings)
}

func collectStrings(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			collectStrings(x, out)
		}
	case []any:
		for _, x := range t {
			collectStrings(x, out)
		}
	case string:
		*out = append(*out, t)
	}
}

// ReadableRoots lists every root the agent may read (for a sandbox and list_allowed_directories).
// File context paths are listed as files.
func (p *Policy) ReadableRoots() []string {
	var roots []string
	for _, m := range p.roots {
		if m.kind != kindPrivate {
			roots = append(roots, m.path)
		}
	}
	if p.guardOn {
		roots = intersect(p.flav, roots, append(slices.Clone(p.guardReadL), p.guardWriteL...))
	}
	return minimal(p.flav, roots)
}

// Root is one root the agent may read, named as tools (list_allowed_directories) and prompts
// name it.
type Root struct {
	Path  string `json:"path"`
	Kind  string `json:"kind"` // "workspace", "temp workspace", "read-only path", "context path"
	Write bool   `json:"write"`
	File  bool   `json:"file,omitempty"` // a single-file context path: its directory is not readable
}

// Roots lists every root the agent may read, sorted by path, with whether it may write there.
// Nested roots are listed too (a workspace inside a context path has its own access); private
// paths never are. With a folder guard, only what lies within it.
func (p *Policy) Roots() []Root {
	var out []Root
	for _, m := range p.roots {
		if m.kind == kindPrivate {
			continue
		}
		r := Root{Path: m.path, Kind: m.kind.label(), Write: m.write, File: m.file}
		if !p.guardOn {
			out = append(out, r)
			continue
		}
		guard := append(slices.Clone(p.guardReadL), p.guardWriteL...)
		if p.inSet(p.guardRead, m.path) {
			r.Write = m.write && p.inSet(p.guardWrite, m.path)
			out = append(out, r)
			continue
		}
		for _, g := range guard {
			if p.flav.within(g, m.path) {
				out = append(out, Root{Path: g, Kind: r.Kind, Write: m.write && p.inSet(p.guardWrite, g), File: r.File})
			}
		}
	}
	slices.SortFunc(out, func(a, b Root) int { return strings.Compare(a.Path, b.Path) })
	return slices.CompactFunc(out, func(a, b Root) bool { return a.Path == b.Path })
}

// DescribeRoots is the list of Roots as text, one line each: what the agent's prompt shows and
// list_allowed_directories returns, in the same words.
func (p *Policy) DescribeRoots() string {
	var b strings.Builder
	for _, r := range p.Roots() {
		access := "read only"
		if r.Write {
			access = "read and write"
		}
		what := r.Kind
		switch {
		case r.Path == p.workspace:
			what = "your workspace"
		case r.Kind == kindTemp.label():
			what = "temp workspace: the other agents' latest work, one folder per anonymous id"
		case r.File:
			what = "context path, a single file (its directory is not readable)"
		}
		fmt.Fprintf(&b, "- %s (%s; %s)\n", r.Path, what, access)
	}
	return b.String()
}

// WritableRoots lists every root the agent may write; protected and excluded paths inside them
// are still refused by CheckPath (see ExcludedUnder for the sandbox).
func (p *Policy) WritableRoots() []string {
	var roots []string
	for _, m := range p.roots {
		if m.write {
			roots = append(roots, m.path)
		}
	}
	if p.guardOn {
		roots = intersect(p.flav, roots, p.guardWriteL)
	}
	return minimal(p.flav, roots)
}

// CanWrite is false when no path is writable: write tools are then not offered.
func (p *Policy) CanWrite() bool { return len(p.WritableRoots()) > 0 }

func intersect(f flavour, roots, guard []string) []string {
	var out []string
	for _, r := range roots {
		for _, g := range guard {
			switch {
			case f.within(g, r):
				out = append(out, g)
			case f.within(r, g):
				out = append(out, r)
			}
		}
	}
	return out
}

// minimal sorts, dedupes and drops roots inside other roots... only when they are the same kind
// of access, which is the case for every caller here.
func minimal(f flavour, roots []string) []string {
	slices.Sort(roots)
	roots = slices.Compact(roots)
	var out []string
	for _, r := range roots {
		if len(out) > 0 && f.within(r, out[len(out)-1]) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// ExcludedUnder lists the paths under root (canonical, as WritableRoots and Managed name it)
// that must stay read-only although root is writable: protected paths, read-only managed roots,
// and (outside the own workspace) default-excluded names found in the tree, which is walked
// without following links.
func (p *Policy) ExcludedUnder(root string) []string {
	r := root
	var out []string
	for pr := range p.protected {
		if p.flav.within(pr, r) {
			out = append(out, pr)
		}
	}
	for _, m := range p.roots {
		if !m.write && p.flav.within(m.path, r) && m.path != r {
			out = append(out, m.path)
		}
	}
	if p.workspace == "" || !p.flav.within(r, p.workspace) {
		out = append(out, findExcluded(r, p.workspace)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DescribeLimits is appended to every tool description (spec 003's enhanced description).
func (p *Policy) DescribeLimits() string {
	var rw, ro, files []string
	for _, m := range p.roots {
		switch {
		case m.kind == kindPrivate:
		case m.file:
			files = append(files, fmt.Sprintf("%s (%s)", m.path, map[bool]string{true: "read and write", false: "read only"}[m.write]))
		case m.write:
			rw = append(rw, m.path)
		default:
			ro = append(ro, m.path)
		}
	}
	slices.Sort(rw)
	slices.Sort(ro)
	slices.Sort(files)
	var b strings.Builder
	b.WriteString("\n\nDIRECTORY ACCESS RESTRICTIONS (enforced; any other path is refused):\n")
	if p.guardOn {
		fmt.Fprintf(&b, "- Folder guard: reads only within %s; writes only within %s\n",
			strings.Join(append(slices.Clone(p.guardReadL), p.guardWriteL...), ", "), strings.Join(p.guardList(Write), ", "))
	}
	if len(rw) > 0 {
		fmt.Fprintf(&b, "- Read and write: %s\n", strings.Join(rw, ", "))
	} else {
		b.WriteString("- You cannot write anywhere.\n")
	}
	if len(ro) > 0 {
		fmt.Fprintf(&b, "- Read only: %s\n", strings.Join(ro, ", "))
	}
	if len(files) > 0 {
		fmt.Fprintf(&b, "- Single files (their directories are not accessible): %s\n", strings.Join(files, ", "))
	}
	if n := len(p.protected); n > 0 {
		var ps []string
		for pr := range p.protected {
			ps = append(ps, pr)
		}
		slices.Sort(ps)
		if len(ps) > 10 {
			ps = append(ps[:10], fmt.Sprintf("and %d more", n-10))
		}
		fmt.Fprintf(&b, "- Protected (read only): %s\n", strings.Join(ps, ", "))
	}
	fmt.Fprintf(&b, "- Always read only outside your workspace: %s\n", strings.Join(DefaultExcluded, ", "))
	if p.workspace != "" {
		fmt.Fprintf(&b, "- Relative paths resolve against your workspace: %s\n", p.workspace)
	}
	return b.String()
}

// resolveArg resolves one path argument with r (for rule matching).
func (p *Policy) resolveArg(r Resolver, pa PathAccess) (string, error) {
	abs, err := p.flav.absolute(pa.Path, p.workspace, p.home)
	if err != nil {
		return "", err
	}
	return r.Resolve(pa.Arg, abs, pa.Access == Delete)
}

// windowsCommandSyntax are the characters through which cmd.exe reads a command differently from
// the POSIX shell the check parses it as: \ (a separator there, an escape here: ..\..\x would be
// judged as the name ....x), %VAR% and !VAR! (expanded), ^ (dropped), and the operators that
// join commands or redirect (&, |, <, >, parentheses), plus quotes and line breaks.
const windowsCommandSyntax = "\\%^!&|<>()\"\r\n"

// windowsCommand decides a command on Windows before the path rules: it runs through cmd.exe,
// whose builtins (type, del, copy, ...) and syntax the check does not know, so the check cannot
// list what it touches. A command runs only when it is one plain program call (none of
// windowsCommandSyntax) that a rule in permissions.allow names; its paths are then checked too.
func (p *Policy) windowsCommand(call *ruleCall, ex *extraction, r Request, res Resolver) (Decision, bool) {
	if i := strings.IndexAny(ex.command, windowsCommandSyntax); i >= 0 {
		return Decision{Rule: RuleCannotDetermine, Reason: fmt.Sprintf(
			"Access denied: the command contains %q: on Windows commands run through cmd.exe, which reads \\ %% ! ^ & | < > ( ) and quotes differently from the permission check, so such commands are refused (one program call per command; write paths with /)",
			ex.command[i:i+1])}, true
	}
	if !p.allowedByRule(call, ex, r.Args, res) {
		return Decision{Rule: RuleCannotDetermine, Reason: fmt.Sprintf(
			"Access denied: on Windows commands run through cmd.exe, whose commands the permission check cannot judge, so a command runs only when a rule in permissions.allow names it, e.g. %q",
			r.Tool+"("+strings.TrimSpace(ex.command)+")")}, true
	}
	return Decision{}, false
}
