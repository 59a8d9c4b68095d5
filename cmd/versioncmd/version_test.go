package versioncmd

import (
	"runtime"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/cmd/cmdutil"
)

func TestRun(t *testing.T) {
	ios, out, _ := cmdutil.TestStreams("")
	if err := Run(&Options{IO: ios, Info: Read}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "massgen ") || !strings.Contains(out.String(), runtime.Version()) {
		t.Errorf("stdout %q", out)
	}
}
