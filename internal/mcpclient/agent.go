package mcpclient

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
)

// Runner starts the MCP servers of a run's agents and stops them all at the end; its External
// method has the shape of orchestrator.Options.External.
type Runner struct {
	cfg    *configs.Config
	extra  []string
	warn   func(agentID string, err error)
	logger *zap.Logger

	mu      sync.Mutex
	started []map[string]filesystem.External
}

// NewRunner prepares a Runner for cfg. extraDirs are read-only roots every agent also has (e.g.
// the previous turn's workspace); warn (may be nil) hears about each server that failed to start,
// the run going on without it.
func NewRunner(cfg *configs.Config, extraDirs []string, warn func(agentID string, err error), logger *zap.Logger) *Runner {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Runner{cfg: cfg, extra: extraDirs, warn: warn, logger: logger}
}

// External connects agent a's mcp_servers (nil when it has none). The filesystem server gets
// the agent's managed directories (workspace, its temp workspace, context paths, extraDirs) when
// its config names none, and relative paths resolve in the agent's workspace, as for the
// permission layer.
func (r *Runner) External(ctx context.Context, a configs.Agent) map[string]filesystem.External {
	if len(a.Backend.MCPServers) == 0 {
		return nil
	}
	var dirs []string
	if a.Backend.CWD != "" {
		dirs = append(dirs, a.Backend.CWD)
	}
	if t := r.cfg.Orchestrator.AgentTemporaryWorkspace; t != "" {
		dirs = append(dirs, filepath.Join(t, a.ID))
	}
	for _, cp := range r.cfg.Orchestrator.ContextPaths {
		dirs = append(dirs, cp.Path)
	}
	dirs = append(dirs, r.extra...)
	ext, errs := ConnectWith(ctx, Options{
		Servers: a.Backend.MCPServers, AllowedDirs: dirs, WorkDir: a.Backend.CWD,
		Logger: r.logger.With(zap.String("agent", a.ID)),
	})
	for _, err := range errs {
		if r.warn != nil {
			r.warn(a.ID, err)
		}
	}
	r.mu.Lock()
	r.started = append(r.started, ext)
	r.mu.Unlock()
	return ext
}

// Close stops every server the Runner started.
func (r *Runner) Close() error {
	r.mu.Lock()
	started := r.started
	r.started = nil
	r.mu.Unlock()
	var errs []error
	for _, ext := range started {
		errs = append(errs, Close(ext))
	}
	return errors.Join(errs...)
}
