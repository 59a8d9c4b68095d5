package permissions

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/massgen-go/massgen/internal/winpath"
	"github.com/massgen-go/massgen/permissions/shellcmd"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// rule is one allow/deny entry: a tool-name glob with an optional argument glob, e.g.
// "execute_command(npm test*)" or "write_file(src/**)". A command tool's argument may instead be
// a regular expression over the programs the command runs (see commandRE).
type rule struct {
	text    string
	tool    string
	class   toolClass // "@read", "@write", "@command": tools by what their declaration does
	arg     string
	hasArgs bool
	re      *commandRE
}

// toolClass names tools by what they do rather than by name, from their declaration: "@read" is
// every declared tool that reads a path (a copy reads its source; edit_file may show the file),
// "@write" every one that writes or deletes a path, "@command" every tool that runs shell
// commands. A copy is both: a deny rule of either class judges all its paths. MassGen's read_file(P), write_file(P) and
// command(P) actions map onto them, and a tool added later is covered by its declaration.
type toolClass string

const (
	classRead    toolClass = "@read"
	classWrite   toolClass = "@write"
	classCommand toolClass = "@command"
)

// ToolClasses are the class names a rule may use in place of a tool name.
func ToolClasses() []string {
	return []string{string(classRead), string(classWrite), string(classCommand)}
}

// Classes are the classes a declared tool is in, as rules naming a class judge it.
func Classes(decl toolargs.Tool) []string {
	var out []string
	for _, c := range []toolClass{classRead, classWrite, classCommand} {
		if c.has(&decl, decl.Command) {
			out = append(out, string(c))
		}
	}
	return out
}

// has reports whether a tool with declaration decl (nil: not declared) is in class c; command
// says whether the call runs shell commands.
func (c toolClass) has(decl *toolargs.Tool, command bool) bool {
	switch c {
	case classCommand:
		return command
	case classWrite:
		return decl != nil && !decl.Command && decl.Destructive()
	case classRead:
		return decl != nil && !decl.Command && decl.Reads()
	}
	return false
}

// commandRE is a command rule's "re:PATTERN" or "!re:PATTERN" argument: PATTERN (RE2) matched
// at the start of each program the command line runs (shellcmd's Analysis.Commands), as
// MassGen's command_line_*_commands are matched with Python's re.match.
//
//   - re:PATTERN matches a command when the pattern matches any of its programs or the whole
//     line (deny rules: command_line_blocked_commands), or, in an allow rule, every program.
//   - !re:PATTERN matches a command when some program does not match the pattern, or when its
//     programs cannot be listed: as a deny rule it lets only commands made entirely of matching
//     programs run (command_line_allowed_commands).
type commandRE struct {
	re     *regexp.Regexp
	fold   *regexp.Regexp // re without case, for calls that compare without case (Windows)
	negate bool
}

// parseCommandRE reads a command rule's argument; ok is false for a glob argument.
func parseCommandRE(arg string) (*commandRE, bool, error) {
	pat, negate := "", false
	switch {
	case strings.HasPrefix(arg, "re:"):
		pat = arg[len("re:"):]
	case strings.HasPrefix(arg, "!re:"):
		pat, negate = arg[len("!re:"):], true
	default:
		return nil, false, nil
	}
	re, err := regexp.Compile(`^(?:` + pat + `)`)
	if err != nil {
		return nil, true, err
	}
	fold, err := regexp.Compile(`(?i)^(?:` + pat + `)`)
	if err != nil {
		return nil, true, err
	}
	return &commandRE{re: re, fold: fold, negate: negate}, true, nil
}

// matches judges a call's command line. all: an allow rule (every program must match).
func (c *commandRE) matches(call *ruleCall, all bool) bool {
	line := strings.TrimSpace(call.command)
	programs := call.programs()
	re := c.re
	if call.fold {
		re = c.fold
	}
	if len(programs) == 0 {
		// Nothing can be listed: an allow-list refuses it, a deny-list looks at the line.
		return c.negate || (!all && line != "" && re.MatchString(line))
	}
	every, some := true, false
	for _, p := range programs {
		m := re.MatchString(p)
		every, some = every && m, some || m
	}
	switch {
	case c.negate:
		return !every
	case all:
		return every
	default:
		return some || re.MatchString(line)
	}
}

// ValidateRules returns the error of the first rule in list that does not parse (an allow or
// deny list of a config or a project rules file), or nil. tools is the table the Policy will
// be given (Spec.Tools): a rule naming a command tool it declares (execute_command(re:...))
// takes a command's argument.
func ValidateRules(list []string, tools toolargs.Table) error {
	_, err := parseRules(list, tools)
	return err
}

// parseRules reads rules; tools says which tool names are command tools (by their declaration,
// else by name: Table.IsCommand), whose argument is a command line or a regular expression.
func parseRules(list []string, tools toolargs.Table) ([]rule, error) {
	out := make([]rule, 0, len(list))
	for _, t := range list {
		s := strings.TrimSpace(t)
		r := rule{text: s, tool: s}
		if i := strings.IndexByte(s, '('); i >= 0 {
			if !strings.HasSuffix(s, ")") {
				return nil, fmt.Errorf("permissions: rule %q: missing closing parenthesis", t)
			}
			r.tool, r.arg, r.hasArgs = strings.TrimSpace(s[:i]), s[i+1:len(s)-1], true
		}
		if r.tool == "" {
			return nil, fmt.Errorf("permissions: rule %q: no tool name", t)
		}
		if strings.HasPrefix(r.tool, "@") {
			switch c := toolClass(r.tool); c {
			case classRead, classWrite, classCommand:
				r.class = c
			default:
				return nil, fmt.Errorf("permissions: rule %q: unknown tool class %s (known: %s)", t, r.tool, strings.Join(ToolClasses(), ", "))
			}
		}
		if _, err := filepath.Match(r.tool, "x"); err != nil {
			return nil, fmt.Errorf("permissions: rule %q: bad tool pattern: %w", t, err)
		}
		command := r.tool == string(classCommand) || tools.IsCommand(r.tool)
		if r.hasArgs && !command {
			if !doublestar.ValidatePattern(r.arg) {
				return nil, fmt.Errorf("permissions: rule %q: bad argument pattern", t)
			}
		}
		if r.hasArgs && command {
			re, ok, err := parseCommandRE(r.arg)
			if err != nil {
				return nil, fmt.Errorf("permissions: rule %q: bad regular expression: %w", t, err)
			}
			if ok {
				r.re = re
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// matchesTool reports whether the rule names the call's tool: by name (the full name or the name
// without its MCP prefix), or by its class.
func (r rule) matchesTool(c *ruleCall) bool {
	if r.class != "" {
		return r.class.has(c.decl, c.isCommand())
	}
	if ok, _ := filepath.Match(r.tool, c.tool); ok {
		return true
	}
	ok, _ := filepath.Match(r.tool, BaseToolName(c.tool))
	return ok
}

// wildcard matches s against a pattern where * is any run of characters and ? one character.
func wildcard(pattern, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := -1, -1
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				nextPx, nextSx = px, sx+1
				px++
				continue
			case '?':
				if sx < len(s) {
					px++
					sx++
					continue
				}
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if nextSx > 0 && nextSx <= len(s) {
			px, sx = nextPx, nextSx
			continue
		}
		return false
	}
	return true
}

// ruleCall is what rules look at.
type ruleCall struct {
	tool    string
	decl    *toolargs.Tool // the tool's declaration, when it is declared (classes match on it)
	cmd     bool           // the tool runs shell commands (Policy.IsCommand)
	command string         // for command tools
	listed  bool           // progs was computed
	progs   []string       // the programs command runs (regular-expression rules), listed once
	paths   []string       // candidate spellings of every path argument, grouped per path
	groups  [][]string
	strings []string // every string argument (other tools)
	// fold: compare without case, and path candidates with / for \ (Windows: names, programs
	// and builtins compare without case there, and rules are written with /).
	fold bool
}

// isCommand reports whether the call runs a shell command (Policy.IsCommand).
func (c *ruleCall) isCommand() bool { return c.cmd }

// programs lists the programs the command runs (nil when they cannot be listed).
func (c *ruleCall) programs() []string {
	if !c.listed {
		c.listed = true
		if an, err := shellcmd.Analyze(strings.TrimSpace(c.command), "", false); err == nil {
			c.progs = an.Commands
		}
	}
	return c.progs
}

// matches reports whether the rule applies. For deny, one matching path is enough; for allow,
// every path must match (all=true).
func (r rule) matches(c *ruleCall, all bool) bool {
	if !r.matchesTool(c) {
		return false
	}
	if !r.hasArgs {
		return true
	}
	if r.re != nil {
		return c.isCommand() && r.re.matches(c, all)
	}
	arg := r.arg
	if c.fold {
		arg = winpath.Fold(arg)
	}
	if c.isCommand() && c.command != "" {
		return wildcard(arg, c.foldText(strings.TrimSpace(c.command)))
	}
	if len(c.groups) > 0 {
		matched := 0
		for _, g := range c.groups {
			hit := false
			for _, cand := range g {
				if ok, _ := doublestar.Match(c.foldPattern(arg), cand); ok {
					hit = true
					break
				}
			}
			if hit {
				matched++
				if !all {
					return true
				}
			} else if all {
				return false
			}
		}
		return matched > 0
	}
	for _, s := range c.strings {
		if wildcard(arg, c.foldText(s)) {
			return true
		}
	}
	return false
}

// foldText is s as fold compares it (Windows' case, winpath.Fold).
func (c *ruleCall) foldText(s string) string {
	if c.fold {
		return winpath.Fold(s)
	}
	return s
}

// foldPattern is a path rule's pattern (already folded) as fold compares it: \ is a separator
// on Windows, so it is read as /, never as an escape.
func (c *ruleCall) foldPattern(pat string) string {
	if c.fold {
		return strings.ReplaceAll(pat, `\`, "/")
	}
	return pat
}
