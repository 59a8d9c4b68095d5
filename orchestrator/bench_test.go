package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/logging"
)

// zeroBackend answers instantly: n replies with one tool call each, then new_answer, then the
// final text. It allocates nothing per call beyond the response.
type zeroBackend struct {
	n, i int
	tc   backends.ToolCall
}

func (z *zeroBackend) Generate(ctx context.Context, req backends.Request, _ func(backends.Event)) (*backends.Response, error) {
	if req.Phase == PhaseFinal {
		return &backends.Response{Text: "done"}, nil
	}
	z.i++
	if z.i <= z.n {
		return &backends.Response{ToolCalls: []backends.ToolCall{z.tc}}, nil
	}
	return answerResp("answer"), nil
}
func (z *zeroBackend) Provider() string { return "zero" }
func (z *zeroBackend) Model() string    { return "zero" }

// BenchmarkToolCall measures the orchestrator's own cost per tool call with a zero-latency
// backend: the agent loop, the permission check (Guard over the Policy), the audit line in
// permissions.jsonl, the zap event lines in the run log, and the tool itself on a small file.
func BenchmarkToolCall(b *testing.B) {
	for _, name := range []string{"read_file", "write_file", "denied_write"} {
		b.Run(name, func(b *testing.B) {
			tool := name
			base := b.TempDir()
			ws := filepath.Join(base, ".massgen", "workspaces", "workspace1")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "small.txt"), []byte("hello\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			cfg := &configs.Config{BaseDir: base}
			cfg.Orchestrator.SnapshotStorage = filepath.Join(base, ".massgen", "snapshots")
			cfg.Orchestrator.AgentTemporaryWorkspace = filepath.Join(base, ".massgen", "temp_workspaces")
			cfg.Agents = []configs.Agent{{ID: "solo", Backend: configs.Backend{Type: "zero", CWD: ws}}}
			runDir, err := logging.NewRunDir(cfg.MassgenDir(), time.Now())
			if err != nil {
				b.Fatal(err)
			}
			logger, closeLog, err := logging.New(runDir, false)
			if err != nil {
				b.Fatal(err)
			}
			defer closeLog()
			args := fmt.Sprintf(`{"path":%q}`, filepath.Join(ws, "small.txt"))
			switch name {
			case "write_file": // atomic write: most of its time is the filesystem's fsync
				args = fmt.Sprintf(`{"path":%q,"content":"hello\n"}`, filepath.Join(ws, "out.txt"))
			case "denied_write": // the permission check and audit line, no file I/O
				tool = "write_file"
				args = fmt.Sprintf(`{"path":%q,"content":"x"}`, filepath.Join(base, "outside.txt"))
			}
			zb := &zeroBackend{n: b.N, tc: backends.ToolCall{ID: "c", Name: tool, Arguments: []byte(args)}}
			o := Options{
				Config: cfg, Task: "bench", RunDir: runDir, Logger: logger,
				NewBackend: func(configs.Agent) (backends.Backend, error) { return zb, nil },
			}
			r, err := newRun(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			defer r.close()
			r.maxSteps = b.N + 10
			b.ResetTimer()
			res, err := r.run(context.Background())
			b.StopTimer()
			if err != nil || res.FinalAnswer != "done" {
				b.Fatalf("run: %v, %+v", err, res)
			}
		})
	}
}
