package shellcmd

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// analyzer accumulates the analysis of one command line and its nested shells.
type analyzer struct {
	Analysis
	strict bool
	nwords int // words looked at (after brace expansion), across nested shells
}

// shellState is the working directory as the text shows it.
type shellState struct {
	dir   string // as written ("" = the command's working directory)
	known bool
	why   string // why the directory is unknown
}

func knownDir(dir string) *shellState { return &shellState{dir: dir, known: true} }

// analyze parses one command line (the given one, or one nested in it) and walks it.
func (a *analyzer) analyze(command, workDir string, depth int) error {
	return a.analyzeIn(command, knownDir(workDir), depth)
}

func (a *analyzer) analyzeIn(command string, st *shellState, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("%w: the command nests shells more than %d deep", ErrTooLarge, MaxDepth)
	}
	if len(command) > MaxLen {
		return fmt.Errorf("%w: the command is %d bytes (at most %d are checked)", ErrTooLarge, len(command), MaxLen)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return fmt.Errorf("cannot parse the command: %w", err)
	}
	st = &shellState{dir: st.dir, known: st.known, why: st.why} // a nested shell's cd stays there
	w := &walker{a: a, st: st, simple: simpleCalls(f), depth: depth}
	syntax.Walk(f, w.visit)
	return w.err
}

// walker visits the syntax tree of one command line.
type walker struct {
	a      *analyzer
	st     *shellState
	simple map[*syntax.CallExpr]bool
	depth  int
	nodes  int
	err    error
}

func (w *walker) visit(n syntax.Node) bool {
	if w.err != nil {
		return false
	}
	if w.nodes++; w.nodes > MaxNodes {
		w.err = fmt.Errorf("%w: the command has more than %d syntax elements", ErrTooLarge, MaxNodes)
		return false
	}
	if what := expansion(n); what != "" {
		w.a.Dynamic = append(w.a.Dynamic, what)
		return true
	}
	switch x := n.(type) {
	case *syntax.Redirect:
		w.err = w.a.redirect(x, w.st)
	case *syntax.WordIter:
		w.err = w.a.wordsAs("for-list", x.Items, toolargs.Read, w.st)
	case *syntax.UnaryTest:
		if fileTests[x.Op] {
			w.err = w.a.testOperand("[[ "+x.Op.String()+" ]]", x.X, w.st)
		}
	case *syntax.BinaryTest:
		if x.Op == syntax.TsNewer || x.Op == syntax.TsOlder || x.Op == syntax.TsDevIno {
			w.err = errors.Join(w.a.testOperand("[[ "+x.Op.String()+" ]]", x.X, w.st), w.a.testOperand("[[ "+x.Op.String()+" ]]", x.Y, w.st))
		}
	case *syntax.CallExpr:
		w.err = w.a.call(x, w.st, w.simple[x], w.depth)
	}
	return w.err == nil
}

// expansion names what an expanding node does, or "".
func expansion(n syntax.Node) string {
	switch x := n.(type) {
	case *syntax.ParamExp:
		return "variable expansion $" + paramName(x)
	case *syntax.CmdSubst:
		if x.Backquotes {
			return "backtick command substitution"
		}
		return "command substitution $(...)"
	case *syntax.ArithmExp:
		return "arithmetic expansion $((...))"
	case *syntax.ProcSubst:
		return "process substitution"
	case *syntax.ExtGlob:
		return "extended glob"
	}
	return ""
}

func paramName(x *syntax.ParamExp) string {
	if x.Param != nil {
		if x.Short {
			return x.Param.Value
		}
		return "{" + x.Param.Value + "}"
	}
	return "{...}"
}

// fileTests are the [[ ]] operators that look at a file.
var fileTests = map[syntax.UnTestOperator]bool{
	syntax.TsExists: true, syntax.TsRegFile: true, syntax.TsDirect: true, syntax.TsCharSp: true,
	syntax.TsBlckSp: true, syntax.TsNmPipe: true, syntax.TsSocket: true, syntax.TsSmbLink: true,
	syntax.TsSticky: true, syntax.TsGIDSet: true, syntax.TsUIDSet: true, syntax.TsGrpOwn: true,
	syntax.TsUsrOwn: true, syntax.TsModif: true, syntax.TsRead: true, syntax.TsWrite: true,
	syntax.TsExec: true, syntax.TsNoEmpty: true,
}

func (a *analyzer) testOperand(arg string, e syntax.TestExpr, st *shellState) error {
	if w, ok := e.(*syntax.Word); ok {
		return a.wordsAs(arg, []*syntax.Word{w}, toolargs.Read, st)
	}
	return nil
}

// simpleCalls are the calls whose `cd` changes the directory of what follows for sure: top-level
// statements and the left side of && chains, not backgrounded.
func simpleCalls(f *syntax.File) map[*syntax.CallExpr]bool {
	out := map[*syntax.CallExpr]bool{}
	var visit func(c syntax.Command)
	visit = func(c syntax.Command) {
		switch x := c.(type) {
		case *syntax.CallExpr:
			out[x] = true
		case *syntax.BinaryCmd:
			if x.Op == syntax.AndStmt {
				if !x.X.Background && !x.X.Negated {
					visit(x.X.Cmd)
				}
				if !x.Y.Background && !x.Y.Negated {
					visit(x.Y.Cmd)
				}
			}
		}
	}
	for _, s := range f.Stmts {
		if !s.Background && !s.Negated {
			visit(s.Cmd)
		}
	}
	return out
}

// wordsAs records the literal words of ws as paths with one access.
func (a *analyzer) wordsAs(arg string, ws []*syntax.Word, acc toolargs.Access, st *shellState) error {
	for _, w := range ws {
		lws, err := a.appendWords(nil, w)
		if err != nil {
			return err
		}
		for _, lw := range lws {
			if !lw.dynamic {
				if err := a.candidate(arg, lw, acc, st); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (a *analyzer) redirect(r *syntax.Redirect, st *shellState) error {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return nil
	}
	if r.Word == nil {
		return nil
	}
	acc := toolargs.Write
	if r.Op == syntax.RdrIn || r.Op == syntax.DplIn {
		acc = toolargs.Read
	}
	lws, err := a.appendWords(nil, r.Word)
	if err != nil {
		return err
	}
	for _, w := range lws {
		if w.dynamic {
			continue
		}
		if (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && (w.s == "-" || isDigits(w.s)) {
			continue // 2>&1, <&-: a file descriptor, not a file
		}
		if err := a.candidate("redirect "+r.Op.String(), w, acc, st); err != nil {
			return err
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// call analyses one simple command of the syntax tree.
func (a *analyzer) call(ce *syntax.CallExpr, st *shellState, simple bool, depth int) error {
	words := make([]word, 0, len(ce.Args))
	for _, w := range ce.Args {
		var err error
		if words, err = a.appendWords(words, w); err != nil {
			return err
		}
	}
	if len(words) == 0 {
		return nil
	}
	return a.command(words, st, simple, depth)
}
