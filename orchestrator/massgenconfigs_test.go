package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	cp "github.com/otiai10/copy"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeclaude"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
	"github.com/massgen-go/massgen/internal/testing/lane"
)

func TestMain(m *testing.M) {
	if fakeclaude.IsInvoked() { // re-executed as the claude CLI of the claude_code configs
		os.Exit(fakeclaude.Main())
	}
	os.Exit(m.Run())
}

// fakeClaudeScript is what the fake claude CLI does in MassGen's claude_code configs: answer,
// vote for the first answer offered, present.
var fakeClaudeScript = fakeclaude.Script{
	Coordination: []fakeclaude.Step{{Tool: "new_answer", Args: map[string]any{"content": "Answer from the claude_code agent."}}},
	Vote:         []fakeclaude.Step{{Tool: "vote", Args: map[string]any{"agent_id": "$VOTE", "reason": "The most complete answer."}}},
	Final:        []fakeclaude.Step{{Text: "Final answer from the claude_code agent."}},
}

// MassGen's own configs (shared/massgen-configs beside the checkout) run as a user would run
// them, with every agent's provider pointed at the fake provider: each reaches the final answer,
// or fails at validation with a message saying what is missing.

// sharedMassGenConfigs finds shared/massgen-configs above the checkout, or
// $MASSGEN_SHARED_CONFIGS; it skips the test when there is none.
func sharedMassGenConfigs(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("MASSGEN_SHARED_CONFIGS"); d != "" {
		return d
	}
	dir, _ := filepath.Abs(".")
	for {
		if fi, err := os.Stat(filepath.Join(dir, "shared", "massgen-configs")); err == nil && fi.IsDir() {
			return filepath.Join(dir, "shared", "massgen-configs")
		}
		if filepath.Dir(dir) == dir {
			t.Skip("shared/massgen-configs not found above the checkout (set MASSGEN_SHARED_CONFIGS): the MassGen configs are not run")
		}
		dir = filepath.Dir(dir)
	}
}

// missingThing is what a validation message must name when a config cannot run here: a key, a
// program or Python module, an outside service, the claude CLI, a file or folder.
var missingThing = regexp.MustCompile(`(?i)\bclaude\b|api key|_API_KEY|not installed|not on PATH|no module|python|is missing|\bmissing\b|does not exist|not found|cannot be run|service|folder|directory`)

// saysWhatIsMissing checks every problem of a validation error (without its file, line and key,
// which name the config, not what it lacks).
func saysWhatIsMissing(err error) bool {
	var ve *configs.ValidationError
	if !errors.As(err, &ve) {
		return missingThing.MatchString(err.Error())
	}
	for _, p := range ve.Problems {
		msg := p.Message
		if p.Key != "" {
			msg = strings.TrimPrefix(msg, p.Key+": ")
		}
		if !missingThing.MatchString(msg) {
			return false
		}
	}
	return len(ve.Problems) > 0
}

// claudeCodeAgent finds a claude_code agent in a config's text (not in a comment).
var claudeCodeAgent = regexp.MustCompile(`(?m)^\s*type:\s*["']?claude_code\b`)

// packageFetchers start MCP servers by downloading a package from a registry: outside services
// this test does not reach (the servers would need the network and, most of them, a token).
var packageFetchers = []string{"npx", "uvx", "bunx", "pipx", "docker"}

// massgenConfigRun is one config's outcome.
type massgenConfigRun struct {
	file       string
	final      string // the final answer ("" when it did not run)
	validation error  // why it cannot run here (nil when it ran)
	notes      []string
}

// runMassGenConfig loads file as `massgen --config` would in base (which holds MassGen's
// resources folder, so its context paths exist), points every agent at srv with fake API keys,
// leaves out the MCP servers that would fetch packages, and runs it.
func runMassGenConfig(ctx context.Context, t *testing.T, file, base string, srv *fakeprovider.Server) massgenConfigRun {
	out := massgenConfigRun{file: file}
	lookup := func(name string) (string, bool) {
		switch {
		case name == "AZURE_OPENAI_ENDPOINT":
			return srv.BaseURL("azure_openai"), true
		case strings.HasSuffix(name, "_API_KEY") || strings.HasSuffix(name, "_TOKEN"):
			return "fake-" + strings.ToLower(name), true
		}
		return "", false
	}
	cfg, _, err := configs.LoadForRun(configs.LoadOptions{Name: file, BaseDir: base, Home: filepath.Join(base, "home"), LookupEnv: lookup})
	if err == nil {
		err = cfg.CheckContextPaths()
	}
	if err != nil {
		out.validation = err
		return out
	}
	for i := range cfg.Agents {
		b := &cfg.Agents[i].Backend
		if bt, ok := configs.LookupBackendType(b.Type); ok && bt.Family != "scripted" && bt.Family != "claude_code" {
			b.BaseURL = srv.BaseURL(b.Type)
		}
		b.MCPServers = slices.DeleteFunc(b.MCPServers, func(s configs.MCPServer) bool {
			if slices.Contains(packageFetchers, filepath.Base(s.Command)) {
				out.notes = append(out.notes, fmt.Sprintf("MCP server %s not started: %s %s fetches a package (an outside service)", s.Name, s.Command, strings.Join(s.Args, " ")))
				return true
			}
			return false
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
		out.notes = append(out.notes, ev.Text)
	}
	if err != nil {
		t.Errorf("%s: the run failed: %v", file, err)
		return out
	}
	out.final = res.FinalAnswer
	return out
}

func TestMassGenConfigsRun(t *testing.T) {
	lane.Long(t)
	root := sharedMassGenConfigs(t)
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".yaml" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("only %d configs under %s", len(files), root)
	}
	srv := fakeprovider.New(fakeprovider.Agreeable())
	defer srv.Close()
	// claude_code agents drive the claude CLI: the fake one, first on PATH, unless this machine
	// has the real one (which this test must not call: those configs then fail validation).
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
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()

	var mu sync.Mutex
	var runs []massgenConfigRun
	t.Run("configs", func(t *testing.T) {
		for _, file := range files {
			rel, _ := filepath.Rel(root, file)
			t.Run(rel, func(t *testing.T) {
				t.Parallel()
				base := t.TempDir()
				// MassGen's configs name folders of its repository as context paths.
				if err := cp.Copy(filepath.Join(root, "resources"), filepath.Join(base, "massgen", "configs", "resources")); err != nil {
					t.Fatal(err)
				}
				raw, _ := os.ReadFile(file)
				var r massgenConfigRun
				if realClaude != "" && claudeCodeAgent.Match(raw) {
					r.validation = errors.New("claude_code: this test cannot fake the claude CLI found at " + realClaude)
				} else {
					r = runMassGenConfig(ctx, t, file, base, srv)
				}
				r.file = rel
				mu.Lock()
				runs = append(runs, r)
				mu.Unlock()
				switch {
				case r.validation != nil && (realClaude == "" || !claudeCodeAgent.Match(raw)):
					// Only claude_code needs what this machine may lack (a claude CLI it may fake).
					t.Errorf("%s must run here: %v", rel, r.validation)
				case r.validation != nil:
					if !saysWhatIsMissing(r.validation) {
						t.Errorf("%s fails validation without saying what is missing:\n%v", rel, r.validation)
					}
				case !strings.HasPrefix(r.final, "Final answer from "):
					if !t.Failed() {
						t.Errorf("%s: final answer %q, want the fake model's", rel, r.final)
					}
				}
			})
		}
	})
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the configs did not all finish within %s", testTimeout)
	}

	slices.SortFunc(runs, func(a, b massgenConfigRun) int { return strings.Compare(a.file, b.file) })
	ran := 0
	for _, r := range runs {
		switch {
		case r.validation != nil:
			t.Logf("%-70s cannot run here: %s", r.file, firstLine(r.validation.Error()))
		case r.final != "":
			ran++
			t.Logf("%-70s final answer", r.file)
		default:
			t.Logf("%-70s FAILED", r.file)
		}
		for _, n := range r.notes {
			t.Logf("    %s", firstLine(n))
		}
	}
	t.Logf("%d of %d configs reached the final answer; %d requests to the fake provider", ran, len(runs), srv.Count())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
