package backends

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

func TestClaudeCode(t *testing.T) {
	withCLI := t.TempDir()
	if err := os.WriteFile(filepath.Join(withCLI, "claude"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want error
		msg  string
	}{
		{"claude CLI missing", t.TempDir(), ErrClaudeCodeMissing, "backend claude_code needs the `claude` CLI (Claude Code) on PATH; install it or use type: claude"},
		{"claude CLI present", withCLI, ErrClaudeCodeUnsupported, ErrClaudeCodeUnsupported.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			cfg := configs.Backend{Type: "claude_code", Model: "claude-sonnet-4-5", CWD: t.TempDir()}
			// No key needed, and New succeeds so claude_code configs load and validate.
			if err := CheckKey(cfg, func(string) (string, bool) { return "", false }); err != nil {
				t.Fatalf("CheckKey: %v", err)
			}
			b, err := New(cfg, Options{})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if b.Provider() != "claude_code" || b.Model() != "claude-sonnet-4-5" {
				t.Errorf("Provider/Model = %q/%q", b.Provider(), b.Model())
			}
			_, err = b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
			if !errors.Is(err, tt.want) || err.Error() != tt.msg {
				t.Fatalf("Generate err = %v, want %q", err, tt.msg)
			}
		})
	}
}
