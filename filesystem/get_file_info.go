package filesystem

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/massgen-go/massgen/internal/tooldecl"
)

//go:embed get_file_info.md
var getFileInfoDescription string

type getFileInfoParams struct {
	Path string `json:"path" access:"read" required:"true" empty:"ok"`
}

func init() {
	register(tooldecl.Def[getFileInfoParams]{
		Name:        "get_file_info",
		Description: getFileInfoDescription,
		Order:       100,
	}, (*Toolset).getFileInfo)
}

func (t *Toolset) getFileInfo(ctx context.Context, c *call, _ getFileInfoParams) (any, error) {
	w, err := c.existing("path")
	if err != nil {
		return nil, err
	}
	fi := w.Info
	out := map[string]any{
		"path": w.Path, "size": fi.Size, "type": typeOf(fi.Mode),
		"isDirectory": fi.IsDir(), "isFile": fi.IsRegular(),
		"permissions": fmt.Sprintf("%04o", fi.Mode.Perm()), "modified": fi.Mtime.UTC().Format(time.RFC3339),
		"accessed": fi.Atime.UTC().Format(time.RFC3339), "changed": fi.Ctime.UTC().Format(time.RFC3339),
	}
	if fi.IsRegular() {
		out["binary"] = binaryKind(w.Path, nil) != ""
	}
	return out, nil
}
