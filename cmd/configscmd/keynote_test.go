package configscmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// With GOOGLE_API_KEY and GEMINI_API_KEY both set, `massgen configs validate` does not pass on
// the Gemini SDK's line (which names the key massgen does not use); massgen says which key it
// uses, once for every file and agent. The real binary: the SDK prints through the process's log
// package, which main sets up.
func TestValidateSaysWhichGeminiKeyOnce(t *testing.T) {
	bin := testbin.For(t)
	dir := t.TempDir()
	cfg := "agents:\n  - id: a\n    backend: {type: gemini, model: gemini-2.5-flash}\n  - id: b\n    backend: {type: gemini, model: gemini-2.5-flash}\n"
	for _, f := range []string{"one.yaml", "two.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "configs", "validate", "one.yaml", "two.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GOOGLE_API_KEY=g", "GEMINI_API_KEY=k")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("validate: %v\n%s%s", err, out, stderr.String())
	}
	e := stderr.String()
	if strings.Contains(e, "Both GOOGLE_API_KEY") {
		t.Errorf("the SDK's line leaked:\n%s", e)
	}
	note := "note: gemini: API key from GEMINI_API_KEY; GOOGLE_API_KEY is set too and not used\n"
	if strings.Count(e, note) != 1 || strings.Count(e, "note:") != 1 {
		t.Errorf("stderr:\n%s\nwant the note once: %q", e, note)
	}
	if !strings.Contains(string(out), "one.yaml: ok (2 agents)") || !strings.Contains(string(out), "two.yaml: ok (2 agents)") {
		t.Errorf("stdout:\n%s", out)
	}
}
