package filesystem

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/internal/tooldecl"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// ExecuteCommand is the name of the tool that runs shell commands (rules name it:
// execute_command(npm test*)).
const ExecuteCommand = "execute_command"

//go:embed execute_command.md
var executeCommandDescription string

// The command's own paths are analysed from its words; it is cancelled with the run.
type executeCommandParams struct {
	Command string `json:"command" access:"command" required:"true" description:"Shell command."`
	WorkDir string `json:"work_dir" access:"read" description:"Working directory (default: your workspace)."`
	Timeout int    `json:"timeout" description:"Seconds before the command and everything it started are killed."`
}

func init() {
	register(tooldecl.Def[executeCommandParams]{
		Name:        ExecuteCommand,
		Description: executeCommandDescription,
		Order:       180,
		Cancellable: true,
	}, (*Toolset).executeCommand)
}

func (t *Toolset) executeCommand(ctx context.Context, c *call, p executeCommandParams) (any, error) {
	command, wd, timeout := p.Command, p.WorkDir, p.Timeout
	if timeout <= 0 {
		timeout = defaultCommandTimeout
	}
	if timeout > maxCommandTimeout {
		timeout = maxCommandTimeout
	}
	// The working directory was walked once by the decision: the command starts in that
	// directory (a handle), whatever its path leads to by now.
	arg := "work_dir"
	if wd == "" {
		if t.pol.Spec().Workspace == "" {
			return nil, fmt.Errorf("work_dir is required: this agent has no workspace")
		}
		arg = toolargs.DefaultWorkDirArg
	}
	w, d, err := c.dirOf(arg)
	if err != nil {
		return nil, fmt.Errorf("work_dir: %w", err)
	}
	defer d.Close()
	dirFile, err := d.File()
	if err != nil {
		return nil, fmt.Errorf("work_dir: %w", err)
	}
	defer dirFile.Close()
	sandbox.ReportFallback(t.o.Sandbox, t.log)
	pol := t.sandboxPolicy()
	inv, pol, note := t.beforeCommand(ctx, pol) // change journal: see journal_command.go
	res, err := sandbox.Run(ctx, sandbox.Options{
		Mode: t.o.Sandbox, Command: command, Dir: w.Path, DirHandle: dirFile,
		Timeout: time.Duration(timeout) * time.Second, MaxOutput: maxCommandOutput,
		Policy: pol, Trash: t.trashFromDir, Log: t.log, Limits: t.o.CommandLimits, Network: t.commandNetwork(ctx, ExecuteCommand),
	})
	t.afterCommand(ctx, inv, pol.Keep)
	if err != nil {
		return nil, err
	}
	out := commandResult{Command: command, WorkDir: w.Path, Success: res.ExitCode == 0 && !res.TimedOut, Result: res}
	out.Stderr += note
	return out, nil
}
