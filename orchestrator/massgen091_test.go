package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	cp "github.com/otiai10/copy"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeclaude"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/internal/testing/massgen091"
)

// massgen091Timeout bounds every run of TestMassGen091ConfigsRun together (about a minute here).
const massgen091Timeout = 5 * time.Minute

// Every config of MassGen 0.1.91 runs as a user would run it from a MassGen checkout, every
// agent's provider pointed at the fake provider (claude_code agents at the fake claude CLI):
// each reaches the final answer, or is refused by the checks of `configs validate` (which a run
// makes too) only for reasons that are not massgen's (massgen091.Reasons).
func TestMassGen091ConfigsRun(t *testing.T) {
	lane.Long(t)
	root := massgen091.Root(t)
	files := massgen091.Files(t, root)
	srv := fakeprovider.New(fakeprovider.Agreeable())
	defer srv.Close()
	realClaude, _ := exec.LookPath("claude")
	if realClaude == "" {
		env, _, err := fakeclaude.Setup(t.TempDir(), fakeClaudeScript)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
	}
	// The configs name folders and files of the checkout (context paths, custom tools): each run
	// sees a copy of them, shared by the runs, under its own project folder.
	checkout := t.TempDir()
	for _, dir := range []string{"configs/resources", "tool"} {
		if err := cp.Copy(filepath.Join(root, "massgen", dir), filepath.Join(checkout, "massgen", dir)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), massgen091Timeout)
	defer cancel()
	known := func(typ string) bool { _, ok := configs.LookupBackendType(typ); return ok }

	var mu sync.Mutex
	ran, refused := 0, map[string]int{}
	t.Run("configs", func(t *testing.T) {
		for _, file := range files {
			rel, _ := filepath.Rel(root, file)
			t.Run(rel, func(t *testing.T) {
				t.Parallel()
				base := t.TempDir()
				if err := os.Symlink(filepath.Join(checkout, "massgen"), filepath.Join(base, "massgen")); err != nil {
					t.Fatal(err)
				}
				raw, _ := os.ReadFile(file)
				if realClaude != "" && claudeCodeAgent.Match(raw) {
					t.Skipf("claude_code: this test cannot fake the claude CLI found at %s", realClaude)
				}
				cfg, lookup, probs := loadMassGen091(file, base, srv)
				var final string
				var notes []string
				if len(probs) == 0 {
					// The run checks the custom tools itself (by reading them, as validate
					// does): their problems come back as a validation error.
					final, notes, probs = runMassGen091(ctx, t, cfg, base, srv, lookup)
				}
				if len(probs) > 0 {
					var kinds []string
					for _, p := range probs {
						kind, ok := massgen091.Classify(rel, p, known)
						if !ok {
							t.Errorf("refused for a reason that is massgen's: %s", p)
							continue
						}
						if !slices.Contains(kinds, kind) {
							kinds = append(kinds, kind)
						}
					}
					mu.Lock()
					for _, k := range kinds {
						refused[k]++
					}
					mu.Unlock()
					return
				}
				if !strings.HasPrefix(final, "Final answer from ") {
					t.Errorf("final answer %q, want the fake model's; notes:\n%s", final, strings.Join(notes, "\n"))
					return
				}
				mu.Lock()
				ran++
				mu.Unlock()
			})
		}
	})
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the configs did not all finish within %s", massgen091Timeout)
	}
	var kinds []string
	for k, n := range refused {
		kinds = append(kinds, fmt.Sprintf("%3d %s", n, k))
	}
	sort.Strings(kinds)
	t.Logf("%d of %d configs reached the final answer (%d requests to the fake provider); the others were refused for:\n%s",
		ran, len(files), srv.Count(), strings.Join(kinds, "\n"))
}

// loadMassGen091 loads file as a run from base would, with fake API keys, and makes the checks
// a run makes before it starts (those of `configs validate` but the custom tools'); it returns
// their messages.
func loadMassGen091(file, base string, srv *fakeprovider.Server) (*configs.Config, func(string) (string, bool), []string) {
	lookup := func(name string) (string, bool) {
		switch {
		case name == "AZURE_OPENAI_ENDPOINT":
			return srv.BaseURL("azure_openai"), true
		case strings.HasSuffix(name, "_API_KEY") || strings.HasSuffix(name, "_TOKEN"):
			return "fake-" + strings.ToLower(name), true
		}
		return "", false
	}
	cfg, _, err := configs.Load(configs.LoadOptions{Name: file, BaseDir: base, Home: filepath.Join(base, "home"), LookupEnv: lookup})
	var msgs []string
	var ve *configs.ValidationError
	switch {
	case errors.As(err, &ve):
		for _, p := range ve.Problems {
			msgs = append(msgs, p.String())
		}
		return nil, lookup, msgs
	case err != nil:
		return nil, lookup, []string{err.Error()}
	}
	probs, _ := cmdutil.CheckConfig(cfg, nil)
	for _, p := range probs {
		msgs = append(msgs, p.String())
	}
	if err := cfg.CheckContextPaths(); err != nil {
		msgs = append(msgs, err.Error())
	}
	return cfg, lookup, msgs
}

// runMassGen091 runs a loaded config against the fake provider, without the MCP servers that
// fetch packages, and returns the final answer and the run's error events, or the problems that
// kept it from starting.
func runMassGen091(ctx context.Context, t *testing.T, cfg *configs.Config, base string, srv *fakeprovider.Server, lookup func(string) (string, bool)) (string, []string, []string) {
	var notes []string
	for i := range cfg.Agents {
		b := &cfg.Agents[i].Backend
		if bt, ok := configs.LookupBackendType(b.Type); ok && bt.Family != "scripted" && bt.Family != "claude_code" {
			b.BaseURL = srv.BaseURL(b.Type)
		}
		b.MCPServers = slices.DeleteFunc(b.MCPServers, func(s configs.MCPServer) bool {
			return slices.Contains(packageFetchers, filepath.Base(s.Command))
		})
	}
	runDir := filepath.Join(base, "run")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var evs events
	stream := evs.stream()
	res, err := Run(ctx, Options{
		Config:    cfg,
		Task:      "Describe two famous Beatles members: John Lennon and Paul McCartney.",
		RunDir:    runDir,
		LookupEnv: lookup,
		Home:      filepath.Join(base, "home"),
		Events:    stream,
	})
	evs.finish(stream)
	for _, ev := range evs.of(EventError, "") {
		notes = append(notes, ev.Text)
	}
	var ve *configs.ValidationError
	switch {
	case errors.As(err, &ve):
		var probs []string
		for _, p := range ve.Problems {
			probs = append(probs, p.String())
		}
		return "", notes, probs
	case err != nil:
		return "", append(notes, "the run failed: "+err.Error()), nil
	}
	return res.FinalAnswer, notes, nil
}
