// Package shellcmd reads a shell command line as bash would and lists, from its text alone, the
// paths it reads, writes and deletes. It never looks at the filesystem: the permission core
// judges what it finds. What it knows of each program is the table in programs.go.
package shellcmd

import (
	"errors"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// Bounds on what one command may make the analysis look at: a decision must stay cheap in time
// and memory whatever the model sends ("echo {a,b}{a,b}..." multiplies words before any check).
const (
	MaxLen   = 256 << 10 // bytes of command text
	MaxWords = 4096      // words after brace expansion, nested shells included
	MaxNodes = 1 << 18   // syntax nodes
	MaxDepth = 8         // shells nested in shells (sh -c, eval, trap, ...)
)

// ErrTooLarge marks commands refused because checking them would cost too much.
var ErrTooLarge = errors.New("command too large to check")

// ErrDangerous marks commands refused whatever the permissions.
var ErrDangerous = errors.New("dangerous command")

// Analysis is what a command line does, as far as its text shows.
type Analysis struct {
	// Paths are the paths the command touches, relative ones relative to its working
	// directory as given. Removed entries (rm, rmdir, unlink, the sources of mv, ...) are
	// toolargs.Delete.
	Paths []toolargs.PathArg
	// Dynamic lists what hides paths from the text: expansions ($VAR, $(...), backticks,
	// <(...)) and arguments a program gets elsewhere (xargs, find -exec {} when it writes).
	Dynamic []string
	// Inline lists interpreters given program text (python3 -c, node -e, awk '...', code on
	// stdin): that text is never taken as a path, and it is not analysed.
	Inline []string
	// Commands lists every program the line runs, in the order written, as its words (after
	// quote removal and brace expansion) joined by spaces: those of pipelines and lists, of
	// nested shells (sh -c, eval), and those wrappers run (env, xargs, find -exec, ...). A word
	// holding an expansion keeps only its literal text.
	Commands []string
}

// Analyze parses command as bash would and lists the paths it reads, writes and deletes.
// workDir is the command's working directory as given ("" = the workspace). strict: commands
// run without the kernel sandbox (operands of unknown programs are taken as written, etc.).
func Analyze(command, workDir string, strict bool) (*Analysis, error) {
	a := &analyzer{strict: strict}
	if workDir != "" {
		a.add("work_dir", workDir, toolargs.Read, false)
	}
	if err := a.analyze(command, workDir, 0); err != nil {
		return nil, err
	}
	return &a.Analysis, nil
}

// IsDangerousName reports whether a command name (or path) is a program refused whatever the
// permissions (sudo, mkfs.ext4, /sbin/reboot, ...).
func IsDangerousName(name string) bool {
	p := lookup(baseName(name))
	return p != nil && p.refuse != ""
}
