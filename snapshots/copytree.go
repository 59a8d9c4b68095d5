package snapshots

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/internal/private"
	"github.com/massgen-go/massgen/internal/safefs"
)

// CopyTree copies the workspace src to dst (created; it must not exist or be empty) with the
// rules snapshots follow: src is read by descriptor (internal/safefs), never through a link, so
// nothing outside it is ever read;
// regular files are copied (never linked: the workspace stays writable), keeping mode, mtime and
// holes; symlinks are kept as symlinks only when they resolve inside src; other file types and
// unreadable files are left out (and logged). A missing src gives an empty dst. A workspace
// whose files add up to more than MaxWorkspaceBytes (apparent size) is refused with a
// *TooLargeError before anything is written. A failure to write dst (a full disk) is an error
// wrapping *WriteError: the copy is incomplete.
func CopyTree(ctx context.Context, src, dst string, log *zap.Logger) error {
	return copyTree(ctx, src, dst, MaxWorkspaceBytes, log)
}

func copyTree(ctx context.Context, src, dst string, maxBytes int64, log *zap.Logger) error {
	if log == nil {
		log = zap.NewNop()
	}
	root, err := safefs.OpenDirPath(src)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dst, private.DirMode); err != nil {
			return fmt.Errorf("snapshots: copy %s: %w", src, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("snapshots: copy %s: %w", src, err)
	}
	defer root.Close()
	ents, err := scan(ctx, root, log)
	if err != nil {
		return fmt.Errorf("snapshots: copy %s: %w", src, err)
	}
	if err := checkSize(src, ents, maxBytes); err != nil {
		return fmt.Errorf("snapshots: copy %s: %w", src, err)
	}
	if err := os.MkdirAll(dst, private.DirMode); err != nil {
		return fmt.Errorf("snapshots: copy %s: %w", src, err)
	}
	var files []entry
	for _, e := range ents {
		to := filepath.Join(dst, e.rel)
		switch e.kind {
		case kindDir:
			err = mkdir(to, e.mode)
		case kindSymlink:
			err = os.Symlink(e.target, to)
		case kindFile:
			files = append(files, e)
		}
		if err != nil {
			return fmt.Errorf("snapshots: copy %s: %w", src, err)
		}
	}
	budget := newCopyBudget(src, maxBytes)
	err = parallel(ctx, files, func(e entry) error {
		_, err := copyFromWorkspace(root, e.rel, filepath.Join(dst, e.rel), budget)
		var we *WriteError
		if errors.As(err, &we) {
			return fmt.Errorf("%s: %w", e.rel, err)
		}
		if err != nil {
			log.Warn("copy: file left out", zap.String("path", e.rel), zap.Error(err))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("snapshots: copy %s: %w", src, firstError(err))
	}
	return nil
}
