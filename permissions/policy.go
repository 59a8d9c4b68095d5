package permissions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/roots"
)

// DefaultExcluded are path components that make a path read-only (spec 000, "Default Excluded
// Patterns"), except inside the agent's own workspace.
var DefaultExcluded = []string{
	layout.DirName, ".env", ".git", "node_modules", "__pycache__", ".venv", "venv",
	".pytest_cache", ".mypy_cache", ".ruff_cache", ".DS_Store", "massgen_logs",
}

type kind uint8

const (
	kindWorkspace kind = iota + 1
	kindTemp
	kindReadOnly
	kindContext
	kindPrivate
)

func (k kind) String() string {
	switch k {
	case kindWorkspace:
		return "workspace"
	case kindTemp:
		return "temp-workspace"
	case kindReadOnly:
		return "read-only-path"
	case kindContext:
		return "context-path"
	case kindPrivate:
		return "private-path"
	}
	return "unknown"
}

// managed is one managed root, symlink-resolved.
type managed struct {
	path  string
	kind  kind
	write bool // effective for this agent in this role
	file  bool // a file context path: grants that file only
}

// Policy decides for one agent in one role. It is immutable after New; Decide only reads it, so
// it is safe for concurrent use.
type Policy struct {
	spec      Spec
	fs        fsys
	flav      flavour // how paths are written and compared; chosen at construction
	home      string
	workspace string     // resolved; "" when the agent has none
	set       *roots.Set // the managed roots decided on: the environment's, or resolved by New

	roots       map[string]*managed
	fileParents map[string]string   // parent dir of a file context path -> that file
	protected   map[string]string   // protected path -> its context path
	restricted  map[string]struct{} // strict ancestors of protected paths and non-writable roots
	guardOn     bool
	guardRead   map[string]struct{} // read_paths ∪ write_paths
	guardWrite  map[string]struct{}
	guardReadL  []string
	guardWriteL []string

	// foldCase: names that differ only in case are one file (see caseInsensitiveNames); the
	// fold maps take a lower-cased path to its key in roots, protected and restricted.
	foldCase                         bool
	rootFold, protFold, restrictFold map[string]string

	allow, deny []rule
}

// New builds the Policy for spec. Every configured path must be absolute; managed roots are
// resolved (symlinks included) here, once.
func New(spec Spec) (*Policy, error) {
	return newPolicy(spec, osFS{})
}

// NewSnapshot is New for one-shot checks (massgen permissions check): filesystem answers are
// memoized, which is only right while the tree does not change. Runs use New.
func NewSnapshot(spec Spec) (*Policy, error) {
	return newPolicy(spec, &memoFS{stat: map[string]memoStat{}, links: map[string]memoLink{}})
}

func newPolicy(spec Spec, fsx fsys) (*Policy, error) {
	return newPolicyFold(spec, fsx, caseInsensitiveNames)
}

// newPolicyFold is newPolicy with the case rule given (tests run the darwin rule on Linux).
func newPolicyFold(spec Spec, fsx fsys, foldCase bool) (*Policy, error) {
	return newPolicyFlavour(spec, fsx, foldCase, nativeFlavour())
}

// newPolicyFlavour is newPolicy with the case rule and the path flavour given (tests run the
// Windows flavour on Linux, against a fake fsys).
func newPolicyFlavour(spec Spec, fsx fsys, foldCase bool, flav flavour) (*Policy, error) {
	p := &Policy{
		flav:        flav,
		foldCase:    foldCase,
		spec:        spec,
		fs:          fsx,
		home:        spec.Home,
		roots:       map[string]*managed{},
		fileParents: map[string]string{},
		protected:   map[string]string{},
		restricted:  map[string]struct{}{},
	}
	if err := spec.Mode.Check(); err != nil { // a Spec built in code: a typo must not lose the asks
		return nil, fmt.Errorf("permissions: %w", err)
	}
	if spec.Mode == "" {
		p.spec.Mode = ModeAcceptEdits
	}
	if p.home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			p.home = h
		}
	}
	set, err := p.managedRoots(spec)
	if err != nil {
		return nil, err
	}
	p.set = set
	add := func(m *managed) {
		old, ok := p.roots[m.path]
		if !ok {
			p.roots[m.path] = m
			return
		}
		// Two roots on one path: the own workspace wins, private wins over the rest, and
		// otherwise the stricter permission holds.
		switch {
		case old.kind == kindWorkspace:
		case m.kind == kindWorkspace || m.kind == kindPrivate:
			p.roots[m.path] = m
		case old.kind == kindPrivate:
		default:
			old.write = old.write && m.write
			old.file = old.file && m.file
			if m.kind != kindContext {
				old.kind = m.kind
			}
		}
	}
	if set.Workspace != nil {
		p.workspace = set.Workspace.Path
		add(&managed{path: p.workspace, kind: kindWorkspace, write: true})
	}
	for _, r := range set.Temp {
		add(&managed{path: r.Path, kind: kindTemp})
	}
	for _, r := range set.ReadOnly {
		add(&managed{path: r.Path, kind: kindReadOnly})
	}
	for i, c := range set.Context {
		r := c.Path
		isFile := false
		if c.Held() {
			isFile = c.Exists() && !c.IsDir()
		} else if fi, err := fsx.Lstat(r); err == nil && !fi.IsDir() { // r is resolved: no link
			isFile = true
		}
		add(&managed{path: r, kind: kindContext, write: spec.ContextPaths[i].Write && spec.Role == Final, file: isFile})
		if isFile {
			p.fileParents[p.flav.parent(r)] = r
		}
		for _, pr := range c.Protected {
			p.protected[pr.Path] = r
		}
	}
	for _, r := range set.Private {
		add(&managed{path: r.Path, kind: kindPrivate})
	}
	resolveRoot := func(what, path string) (string, error) {
		abs, err := p.rootInput(what, path)
		if err != nil {
			return "", err
		}
		r, err := p.flav.resolve(fsx, abs)
		if err != nil {
			return "", fmt.Errorf("permissions: %s: %w", what, err)
		}
		return r, nil
	}
	if len(spec.ReadPaths) > 0 || len(spec.WritePaths) > 0 {
		p.guardOn = true
		p.guardRead = map[string]struct{}{}
		p.guardWrite = map[string]struct{}{}
		for _, g := range spec.ReadPaths {
			r, err := resolveRoot("read_paths", g)
			if err != nil {
				return nil, err
			}
			p.guardRead[r] = struct{}{}
			p.guardReadL = append(p.guardReadL, r)
		}
		for _, g := range spec.WritePaths {
			r, err := resolveRoot("write_paths", g)
			if err != nil {
				return nil, err
			}
			p.guardRead[r] = struct{}{}
			p.guardWrite[r] = struct{}{}
			p.guardWriteL = append(p.guardWriteL, r)
		}
	}
	// A write on a directory would also hit what lies below it (delete, move): index the
	// ancestors of everything that must not change, so that check is one map lookup.
	markAncestors := func(path string) {
		for q := path; !p.flav.isRoot(q); {
			q = p.flav.parent(q)
			if _, ok := p.restricted[q]; ok {
				return
			}
			p.restricted[q] = struct{}{}
		}
	}
	for pr := range p.protected {
		markAncestors(pr)
	}
	for _, m := range p.roots {
		if !m.write {
			markAncestors(m.path)
		}
	}
	if p.allow, err = parseRules(spec.Allow); err != nil {
		return nil, err
	}
	if p.deny, err = parseRules(spec.Deny); err != nil {
		return nil, err
	}
	if p.foldCase {
		p.rootFold, p.protFold, p.restrictFold = foldIndex(p.roots, p.flav.foldKey), foldIndex(p.protected, p.flav.foldKey), foldIndex(p.restricted, p.flav.foldKey)
	}
	return p, nil
}

// rootInput is a configured root made absolute (~ expanded), or the error naming it.
func (p *Policy) rootInput(what, path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("permissions: %s: empty path", what)
	}
	abs, err := p.flav.expandHome(path, p.home)
	if err != nil {
		return "", fmt.Errorf("permissions: %s: %w", what, err)
	}
	if !p.flav.isAbs(abs) {
		return "", fmt.Errorf("permissions: %s: path %q is not absolute", what, path)
	}
	return abs, nil
}

// RootsInput lists the managed roots of spec as absolute paths: the one place their ~ and
// relative protected paths are expanded. The agent's environment opens them (roots.Open) and
// gives the Set back in Spec.Roots.
func RootsInput(spec Spec) (roots.Input, error) {
	p := &Policy{flav: nativeFlavour(), home: spec.Home}
	if p.home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			p.home = h
		}
	}
	return p.rootsInput(spec)
}

func (p *Policy) rootsInput(spec Spec) (roots.Input, error) {
	var in roots.Input
	var err error
	if spec.Workspace != "" {
		if in.Workspace, err = p.rootInput("workspace", spec.Workspace); err != nil {
			return in, err
		}
	}
	for _, t := range spec.TempWorkspaces {
		abs, err := p.rootInput("temp workspace", t)
		if err != nil {
			return in, err
		}
		in.Temp = append(in.Temp, abs)
	}
	for _, t := range spec.ReadOnly {
		abs, err := p.rootInput("read-only path", t)
		if err != nil {
			return in, err
		}
		in.ReadOnly = append(in.ReadOnly, abs)
	}
	for i, cp := range spec.ContextPaths {
		abs, err := p.rootInput(fmt.Sprintf("context path %d", i), cp.Path)
		if err != nil {
			return in, err
		}
		ci := roots.ContextInput{Path: abs}
		for _, pp := range cp.Protected {
			if !p.flav.isAbs(pp) && !strings.HasPrefix(pp, "~") {
				pp = p.flav.joinRel(cp.Path, pp)
			}
			pabs, err := p.rootInput(fmt.Sprintf("context path %s: protected path", cp.Path), pp)
			if err != nil {
				return in, err
			}
			ci.Protected = append(ci.Protected, pabs)
		}
		in.Context = append(in.Context, ci)
	}
	for _, t := range spec.Private {
		abs, err := p.rootInput("private path", t)
		if err != nil {
			return in, err
		}
		in.Private = append(in.Private, abs)
	}
	return in, nil
}

// managedRoots are the roots the Policy decides on: spec.Roots, opened once by the agent's
// environment (checked to be this spec's), or else resolved here with the Policy's file system.
func (p *Policy) managedRoots(spec Spec) (*roots.Set, error) {
	in, err := p.rootsInput(spec)
	if err != nil {
		return nil, err
	}
	if spec.Roots != nil {
		if err := spec.Roots.Match(in); err != nil {
			return nil, fmt.Errorf("permissions: %w", err)
		}
		return spec.Roots, nil
	}
	set, err := roots.Resolved(in, func(abs string) (string, error) { return p.flav.resolve(p.fs, abs) })
	if err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	return set, nil
}

// Managed is the managed roots this Policy decides on, with their canonical paths: the command
// sandbox, the journal and delivery read them instead of resolving a root again.
func (p *Policy) Managed() *roots.Set { return p.set }

// Within reports whether the path p is root or lies below it, both clean and absolute (resolved
// paths from this Policy): component by component, and on Windows without case (winpath).
func (p *Policy) Within(path, root string) bool { return p.flav.within(path, root) }

// ExcludedBelow is the first default-excluded name among the components of path below root (a
// managed root holding it; "" for none: all of path), written in this Policy's flavour; "" when
// there is none.
func (p *Policy) ExcludedBelow(path, root string) string {
	if p.flav == unixPaths || root == "" {
		return ExcludedComponent(strings.TrimPrefix(path, root))
	}
	return p.flav.excluded(p.flav.rel(path, root))
}

// Spec returns the spec the policy was built from.
func (p *Policy) Spec() Spec { return p.spec }

// Resolve returns the absolute, symlink-resolved path a tool would reach: relative paths join the
// workspace, ~ expands, ".." applies to the directory actually reached.
func (p *Policy) Resolve(path string) (string, error) {
	abs, err := p.flav.absolute(path, p.workspace, p.home)
	if err != nil {
		return "", err
	}
	return p.flav.resolve(p.fs, abs)
}

// Absolute turns a path argument into an absolute path, not yet resolved: ~ expands, relative
// paths join the workspace, "" is the workspace.
func (p *Policy) Absolute(path string) (string, error) {
	return p.flav.absolute(path, p.workspace, p.home)
}

// strRes resolves by string (commands, external tools, one-shot checks).
func (p *Policy) strRes() Resolver { return stringResolver{p.fs, p.flav} }

// CheckPath decides one path (relative paths resolve against the workspace, by string). It never
// asks. Delete judges the entry itself (a link, not its target) and refuses managed roots and
// directories holding read-only paths.
func (p *Policy) CheckPath(path string, a Access) Decision {
	d, _ := p.checkPath(p.strRes(), "", path, a)
	if d.Allow && a == Delete {
		d = p.checkRemoval(d)
	}
	return WithRule(d)
}

// CheckCanonical decides a path that is already canonical: found by a walk that followed no link
// it did not resolve itself (a directory entry reached through descriptors). Nothing is resolved.
func (p *Policy) CheckCanonical(path string, a Access) Decision {
	d, _ := p.decideResolved(path, path, a)
	if d.Allow && a == Delete {
		d = p.checkRemoval(d)
	}
	return WithRule(d)
}

// checkPath resolves one path argument with res and decides on what it found.
func (p *Policy) checkPath(res Resolver, arg, given string, a Access) (Decision, *managed) {
	abs, err := p.flav.absolute(given, p.workspace, p.home)
	if err != nil {
		return deny(given, a, RuleUnresolvable, fmt.Sprintf("Access denied: %v", err)), nil
	}
	phys, err := res.Resolve(arg, abs, a == Delete)
	if err != nil {
		return p.resolveDenied(given, abs, a, err), nil
	}
	d, m := p.decideResolved(given, phys, a)
	if !d.Allow || !p.flav.hasDotDot(abs) {
		return d, m
	}
	if _, byString := res.(stringResolver); !byString {
		// The caller acts on the walk that was judged, which applied ".." physically.
		return d, m
	}
	// A tool that cleans ".." textually before opening reaches another file than the kernel
	// would when a symlink precedes the "..": both readings must be allowed.
	lex, err := p.flav.resolve(p.fs, p.flav.clean(abs))
	if err != nil {
		return p.resolveDenied(given, abs, a, err), nil
	}
	if lex != phys {
		if d2, m2 := p.decideResolved(given, lex, a); !d2.Allow {
			return d2, m2
		}
	}
	return d, m
}

// resolveDenied is the denial of a path that cannot be resolved. When resolution stopped outside
// every managed root, the denial is the same as for any outside path: whether something exists
// there, is a file, a loop or unreadable is not for the agent to learn.
func (p *Policy) resolveDenied(given, abs string, a Access, err error) Decision {
	var re *ResolveError
	if errors.As(err, &re) {
		switch m := p.rootOf(re.At); {
		case m == nil:
			return p.outsideDenied(given, abs, a, re.At)
		case m.kind == kindPrivate:
			// Another agent's files: the same denial as for any path there.
			shown := p.flav.clean(abs)
			return deny(shown, a, RulePrivate, fmt.Sprintf(
				"Access denied: '%s' is private to massgen (another agent's workspace, the snapshots, massgen's logs, sessions and trash, its rule files, or the .env files holding its keys); read other agents' work in your temp workspace", shown))
		}
	}
	return deny(given, a, RuleUnresolvable, fmt.Sprintf("Access denied: %v", err))
}

// rootOf is the deepest managed root holding q (a clean absolute path), or nil.
func (p *Policy) rootOf(q string) *managed {
	for ; ; q = p.flav.parent(q) {
		if m := p.rootAt(q); m != nil {
			return m
		}
		if p.flav.isRoot(q) {
			return nil
		}
	}
}

// ManagedRoot is the deepest managed root (of any kind) holding the canonical path q, or "".
func (p *Policy) ManagedRoot(q string) string {
	if m := p.rootOf(q); m != nil {
		return m.path
	}
	return ""
}

// outsideDenied is the one denial for a path outside every managed root. It names the path as the
// caller wrote it (made absolute), never where it leads, and is the same whether or not anything
// exists there. res is where the path leads (or where resolution stopped): it only selects the
// file-context-path wording, which names nothing the agent was not told.
func (p *Policy) outsideDenied(given, abs string, a Access, res string) Decision {
	shown := p.flav.clean(abs)
	if fp := p.fileParentOf(res); fp != "" {
		return deny(shown, a, RuleFileSibling, fmt.Sprintf(
			"Access denied: '%s' is not an explicitly allowed file in this directory (only %s is shared from %s)",
			shown, p.fileParents[fp], fp))
	}
	return deny(shown, a, RuleOutside, fmt.Sprintf(
		"Access denied: '%s' is outside every path this agent may use (its workspace, temp workspaces and context paths), or leads outside them", shown))
}

// fileParentOf is the directory of a file context path holding q, if q is in no managed root.
func (p *Policy) fileParentOf(q string) string {
	for ; ; q = p.flav.parent(q) {
		if _, ok := p.fileParents[q]; ok {
			return q
		}
		if p.flav.isRoot(q) {
			return ""
		}
	}
}

func hasDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

func deny(path string, a Access, rule Rule, reason string) Decision {
	return Decision{Path: path, Access: a, Rule: rule, Reason: reason}
}

func accessWord(a Access) string { return a.String() }

// decideResolved applies the rules to a resolved path. given is what the caller wrote (for the
// message).
func (p *Policy) decideResolved(given, res string, a Access) (Decision, *managed) {
	show := fmt.Sprintf("'%s'", res)
	if given != res && given != "" {
		show = fmt.Sprintf("'%s' (resolves to '%s')", given, res)
	}
	var hit *managed
	prot := ""
	for q := res; ; q = p.flav.parent(q) {
		if hit == nil {
			if m := p.rootAt(q); m != nil {
				hit = m
			}
		}
		if prot == "" {
			if k, ok := p.protectedAt(q); ok {
				prot = k
			}
		}
		if p.flav.isRoot(q) {
			break
		}
	}
	if hit == nil {
		// Outside every managed root: never say where the given path leads.
		abs, err := p.flav.absolute(given, p.workspace, p.home)
		if err != nil || given == "" {
			abs = res
		}
		return p.outsideDenied(given, abs, a, res), nil
	}
	if hit.kind == kindPrivate {
		return deny(res, a, RulePrivate, fmt.Sprintf(
			"Access denied: %s is private to massgen (another agent's workspace, the snapshots, massgen's logs, sessions and trash, its rule files, or the .env files holding its keys); read other agents' work in your temp workspace", show)), hit
	}
	if hit.file && res != hit.path {
		return deny(res, a, RuleFileSibling, fmt.Sprintf(
			"Access denied: %s is not an explicitly allowed file in this directory (only %s is shared)", show, hit.path)), hit
	}
	if p.guardOn {
		set, what := p.guardRead, "read_paths/write_paths"
		if a != Read {
			set, what = p.guardWrite, "write_paths"
		}
		if !p.inSet(set, res) {
			return deny(res, a, RuleFolderGuard, fmt.Sprintf(
				"Access denied: %s is not within this agent's %s (%s)", show, what, strings.Join(p.guardList(a), ", "))), hit
		}
	}
	if a == Read {
		return Decision{Allow: true, Path: res, Access: a, Rule: hit.kind.rule(),
			Reason: fmt.Sprintf("read allowed: %s is in the agent's %s %s", show, hit.kind.label(), hit.path)}, hit
	}
	if prot != "" {
		return deny(res, a, RuleProtected, fmt.Sprintf(
			"Access denied: %s is protected (protected path %s of context path %s is read-only for every agent)", show, prot, p.protected[prot])), hit
	}
	if hit.kind != kindWorkspace {
		if c := p.flav.excluded(res); c != "" {
			return deny(res, a, RuleDefaultExcluded, fmt.Sprintf(
				"Access denied: %s is read-only: '%s' is a system path (.git, .env, node_modules, .massgen, ... are never written outside the agent's own workspace)", show, c)), hit
		}
	}
	if !hit.write {
		reason := fmt.Sprintf("Access denied: %s is in the %s %s, which is read-only for this agent", show, hit.kind.label(), hit.path)
		if hit.kind == kindContext && p.spec.Role == Coordination {
			reason += " (context paths are read-only during coordination; only the final agent may write, and only to context paths configured with permission: write)"
		} else if hit.kind == kindContext {
			reason += " (its permission is read)"
		}
		return deny(res, a, Rule("read-only-"+hit.kind.String()), reason), hit
	}
	return Decision{Allow: true, Path: res, Access: a, Rule: hit.kind.rule(),
		Reason: fmt.Sprintf("%s allowed: %s is in the agent's %s %s", a, show, hit.kind.label(), hit.path)}, hit
}

// rule is the id of an allow by this kind of root.
func (k kind) rule() Rule { return Rule(k.String()) }

func (k kind) label() string {
	switch k {
	case kindWorkspace:
		return "workspace"
	case kindTemp:
		return "temp workspace"
	case kindReadOnly:
		return "read-only path"
	case kindContext:
		return "context path"
	}
	return "private path"
}

// inSet reports whether res or one of its ancestors is in set (matched per the case rule).
func (p *Policy) inSet(set map[string]struct{}, res string) bool {
	for q := res; ; q = p.flav.parent(q) {
		if _, ok := set[q]; ok {
			return true
		}
		if p.foldCase {
			for k := range set {
				if p.flav.foldKey(k) == p.flav.foldKey(q) {
					return true
				}
			}
		}
		if p.flav.isRoot(q) {
			return false
		}
	}
}

func (p *Policy) guardList(a Access) []string {
	if a != Read {
		if len(p.guardWriteL) == 0 {
			return []string{"none"}
		}
		return p.guardWriteL
	}
	return append(slices.Clone(p.guardReadL), p.guardWriteL...)
}

// ExcludedComponent returns the first component of the slash-separated path p that is a
// default-excluded name, or "". The comparison ignores ASCII case: on case-insensitive
// filesystems .GIT is .git.
func ExcludedComponent(p string) string {
	for _, c := range strings.Split(p, "/") {
		for _, e := range DefaultExcluded {
			if len(c) == len(e) && strings.EqualFold(c, e) {
				return c
			}
		}
	}
	return ""
}

// findExcluded walks root for default-excluded names (not descending into them or into skip).
func findExcluded(root, skip string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if skip != "" && path == skip {
			return filepath.SkipDir
		}
		if path != root && ExcludedComponent(d.Name()) != "" {
			out = append(out, path)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out
}
