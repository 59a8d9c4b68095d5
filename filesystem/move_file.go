package filesystem

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"syscall"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/safefs"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed move_file.md
var moveFileDescription string

type moveFileParams struct {
	Source      string `json:"source" access:"delete" required:"true"`
	Destination string `json:"destination" access:"write" required:"true"`
}

func init() {
	register(tooldecl.Def[moveFileParams]{
		Name:        "move_file",
		Description: moveFileDescription,
		Order:       80,
		Preview: func(_ moveFileParams, paths []string) string {
			if len(paths) != 2 {
				return ""
			}
			return fmt.Sprintf("move %s -> %s", paths[0], paths[1])
		},
	}, (*Toolset).moveFile)
}

func (t *Toolset) moveFile(ctx context.Context, c *call, _ moveFileParams) (any, error) {
	src, err := c.existing("source")
	if err != nil {
		return nil, err
	}
	if root, ok := t.containsRoot(src.Path); ok {
		return nil, fmt.Errorf("cannot move %s: it is (or contains) the managed directory %s", src.Path, root)
	}
	if x := t.excludedBelowRoot(src.Path); x != "" && !t.inWorkspace(src.Path) {
		return nil, fmt.Errorf("cannot move %s: %s is a protected system path", src.Path, x)
	}
	dst, err := c.walk("destination")
	if err != nil {
		return nil, err
	}
	if withinCanonical(dst.Path, src.Path) {
		return nil, fmt.Errorf("cannot move %s into itself", src.Path)
	}
	if src.Info.IsDir() {
		// Protected files inside a moved directory would leave their place.
		if err := t.checkTreeOf(ctx, c.name, src); err != nil {
			return nil, err
		}
	}
	if err := sameEntry(src); err != nil {
		return nil, err
	}
	dir, made, err := dst.MakeParent()
	if err != nil {
		return nil, pathErr(dst.Path, err)
	}
	defer dir.Close()
	if made != "" {
		t.noteCreated(made)
		c.changed(made, changes.Created)
	}
	if err := t.keepOriginal(ctx, src.Dir, src.Name, src.Path); err != nil {
		return nil, err
	}
	if err := t.keepOriginal(ctx, dir, dst.Name, dst.Path); err != nil {
		return nil, err
	}
	err = safefs.Rename(src.Dir, src.Name, dir, dst.Name)
	if errors.Is(err, syscall.EXDEV) {
		err = t.moveAcrossDevices(ctx, c, src, dir, dst.Name)
	}
	if err != nil {
		return nil, pathErr(dst.Path, err)
	}
	// What the agent had read or created moves with the entry; files it never read stay
	// unread under their new name (a move must not make the user's files deletable).
	t.tracker.move(src.Path, dst.Path)
	c.changed(src.Path, changes.Deleted)
	c.changed(dst.Path, changes.Created)
	return map[string]any{"source": src.Path, "destination": dst.Path}, nil
}
