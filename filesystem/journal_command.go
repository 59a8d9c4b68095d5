package filesystem

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/sandbox"
)

// Commands and the change journal: before a command that may write into a journaled context
// path, the recorder takes an inventory of what the command may change there (walkWritable says
// what that is), and after it records what the command changed (changes/journal_command.go).
// When the inventory cannot be taken, the command runs with those context paths read-only.

// commandRoots are the writable roots of pol that are journaled context paths.
func (t *Toolset) commandRoots(pol sandbox.Policy) []string {
	var roots []string
	for _, w := range pol.Write {
		if t.journaled(w) && t.pol.ManagedRoot(w) == w {
			roots = append(roots, w)
		}
	}
	return roots
}

// beforeCommand takes the inventory before a command. When it cannot (too much to copy, or an
// error), it returns pol with those roots read-only and a note for the command's stderr.
func (t *Toolset) beforeCommand(ctx context.Context, pol sandbox.Policy) (*changes.Inventory, sandbox.Policy, string) {
	roots := t.commandRoots(pol)
	if len(roots) == 0 {
		return nil, pol, ""
	}
	inv, err := t.o.Journal.BeforeCommand(ctx, roots, t.walkWritable(pol.Keep))
	if err == nil {
		return inv, pol, ""
	}
	t.log.Warn("command runs with context paths read-only: " + err.Error())
	return nil, readOnlyRoots(pol, roots),
		fmt.Sprintf("\nmassgen: the context paths %s were read-only for this command (%s); deliver files with write_file or copy_file instead\n", strings.Join(roots, ", "), err)
}

// afterCommand records what the command changed (inv nil: nothing was inventoried).
func (t *Toolset) afterCommand(ctx context.Context, inv *changes.Inventory, keep []string) {
	if inv == nil {
		return
	}
	t.o.Journal.AfterCommand(ctx, inv, t.walkWritable(keep))
}

// readOnlyRoots is pol with roots (and the Keep paths under them) no longer writable.
func readOnlyRoots(pol sandbox.Policy, roots []string) sandbox.Policy {
	out := pol
	out.Write = slices.DeleteFunc(slices.Clone(pol.Write), func(w string) bool { return slices.Contains(roots, w) })
	out.Keep = slices.DeleteFunc(slices.Clone(pol.Keep), func(k string) bool {
		for _, r := range roots {
			if pathx.Within(k, r) {
				return true
			}
		}
		return false
	})
	return out
}

// walkWritable visits every entry a command may change under roots (canonical, each a context
// path's root): through descriptors, not entering keep paths (read-only to commands), private
// paths or other managed roots nested inside (a workspace); skipped (may be nil) hears of each.
func (t *Toolset) walkWritable(keep []string) changes.WalkWritable {
	return func(ctx context.Context, roots []string, skipped func(p string), visit func(dir *safefs.Dir, name, p string, info safefs.Info) error) error {
		return t.walkWritableIn(ctx, roots, keep, skipped, visit)
	}
}

func (t *Toolset) walkWritableIn(ctx context.Context, roots, keep []string, skipped func(p string), visit func(dir *safefs.Dir, name, p string, info safefs.Info) error) error {
	if skipped == nil {
		skipped = func(string) {}
	}
	kept := func(p string) bool {
		for _, k := range keep {
			if pathx.Within(p, k) {
				return true
			}
		}
		return false
	}
	for _, root := range roots {
		w, err := safefs.Resolve(root, false)
		if err != nil {
			return err
		}
		if !w.Exists || w.Path != root || kept(root) {
			if kept(root) {
				skipped(root)
			}
			w.Close()
			continue
		}
		if !w.Info.IsDir() { // a single-file context path
			err = visit(w.Dir, w.Name, root, w.Info)
			w.Close()
			if err != nil {
				return err
			}
			continue
		}
		d, err := w.OpenDir()
		w.Close()
		if err != nil {
			return err
		}
		err = walkTree(ctx, d, func(dir *safefs.Dir, rel string, e safefs.Entry) (bool, error) {
			p := safefs.Join(dir.Path, e.Name)
			if kept(p) || t.isPrivate(p) || t.pol.ManagedRoot(p) != root {
				skipped(p)
				return false, nil
			}
			if err := visit(dir, e.Name, p, e.Info); err != nil {
				return false, err
			}
			return e.Info.IsDir(), nil
		})
		d.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
