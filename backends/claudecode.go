package backends

import (
	"context"
	"errors"
	"os/exec"

	"github.com/massgen-go/massgen/configs"
)

// ErrClaudeCodeMissing is returned by a claude_code backend when the `claude` CLI is not on PATH.
var ErrClaudeCodeMissing = errors.New("backend claude_code needs the `claude` CLI (Claude Code) on PATH; install it or use type: claude")

// ErrClaudeCodeUnsupported is returned by a claude_code backend when the CLI is present: driving
// it is not implemented, because Claude Code runs its own file and shell tools, which would
// bypass massgen's permission layer.
var ErrClaudeCodeUnsupported = errors.New("backend claude_code is not supported yet: Claude Code runs its own file and shell tools, which would bypass massgen's permission checks; use type: claude (same models through the Anthropic API)")

// claudeCodeBackend stands in for MassGen's Claude Code backend so claude_code configs load and
// validate; every call fails with a clear reason instead of a confusing provider error.
type claudeCodeBackend struct {
	model    string
	lookPath func(string) (string, error)
}

// newClaudeCode never fails: configs of type claude_code must load; the reason they cannot run
// is reported by Generate (and by Check, for callers that want to know before starting).
func newClaudeCode(cfg configs.Backend, o Options) (Backend, error) {
	return &claudeCodeBackend{model: cfg.Model, lookPath: exec.LookPath}, nil
}

func (b *claudeCodeBackend) Provider() string { return "claude_code" }
func (b *claudeCodeBackend) Model() string    { return b.model }

// Check says why this backend cannot run: the CLI is missing, or (when present) unsupported.
func (b *claudeCodeBackend) Check() error {
	if _, err := b.lookPath("claude"); err != nil {
		return ErrClaudeCodeMissing
	}
	return ErrClaudeCodeUnsupported
}

func (b *claudeCodeBackend) Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, b.Check()
}
