package app

import (
	"fmt"
	"strings"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/orchestrator"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/permissions/toolargs"
)

// The outcome tells the truth about files: a run whose final agent tried to change the user's
// files and was refused must not look like one that did. The outcome recorder counts those
// refusals (noteDenial); the end summary says them and what changed (filesLine), the exit code
// is partial (Outcome.code) and the JSON result carries the count (emitResult).

// DeniedChanges are the final agent's calls that would have changed files and that the
// permission layer refused (a rule, a hook, or an ask with no one to answer it). Calls the
// user refused at the prompt are not counted here: that was the user's choice, listed apart
// ("You denied ...").
type DeniedChanges struct {
	Writes, Deletes, Commands int
}

// Total is the number of refused calls.
func (d DeniedChanges) Total() int { return d.Writes + d.Deletes + d.Commands }

// String is "3 writes", "1 write, 1 delete and 2 commands" ("" for none).
func (d DeniedChanges) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		word string
	}{{d.Writes, "write"}, {d.Deletes, "delete"}, {d.Commands, "command"}} {
		if p.n > 0 {
			parts = append(parts, plural(p.n, p.word))
		}
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// changeKind says how a tool call would change files: "write", "delete", "command", or ""
// for a tool that only reads (or that massgen does not know: an MCP server's own tool).
func changeKind(tool string) string {
	var decl toolargs.Tool
	if t, ok := filesystem.Builtin(toolargs.BaseToolName(tool)); ok {
		decl = t.Decl()
	} else if d, ok := toolargs.Table(nil).Known(tool); ok {
		decl = d
	} else {
		return ""
	}
	if decl.Command {
		return "command"
	}
	writes, deletes := false, false
	for _, a := range decl.Args {
		switch a.Access {
		case toolargs.Write:
			writes = true
		case toolargs.Delete:
			deletes = true
		}
	}
	switch {
	case writes:
		return "write"
	case deletes:
		return "delete"
	}
	return ""
}

// noteDenial counts ev when it is a refused change by the final agent.
func (d *DeniedChanges) noteDenial(ev orchestrator.Event) {
	if ev.Kind != orchestrator.EventToolResult || !ev.Denied || ev.Phase != orchestrator.PhaseFinal ||
		ev.Rule == string(permissions.RuleUserDenied) {
		return
	}
	switch changeKind(ev.Tool) {
	case "write":
		d.Writes++
	case "delete":
		d.Deletes++
	case "command":
		d.Commands++
	}
}

// filesLine is the summary's word on the user's files: the final agent's refused changes and
// whether anything changed in context paths ("3 writes denied, no file changed; see `massgen
// logs`", with a hint when no context path was shared), or that nothing changed although a
// context path was writable. "" when there is
// nothing to add to the list of changes (or no context path was shared and nothing tried).
func filesLine(cfg *configs.Config, denied DeniedChanges, cs *changes.ChangeSet) string {
	changed := len(cs.Files())
	if denied.Total() > 0 {
		what := "no file changed"
		if changed > 0 {
			what = plural(changed, "file") + " changed"
		}
		hint := ""
		if len(cfg.Orchestrator.ContextPaths) == 0 {
			hint = " (no context path was shared: --context PATH)"
		}
		return fmt.Sprintf("Final agent: %s denied, %s; see `massgen logs`%s\n", denied, what, hint)
	}
	if changed > 0 {
		return ""
	}
	for _, cp := range cfg.Orchestrator.ContextPaths {
		if cp.Permission == "write" {
			return "No file changed in context paths.\n"
		}
	}
	return ""
}
