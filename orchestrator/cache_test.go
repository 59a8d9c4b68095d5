package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
)

var ownAnon = regexp.MustCompile(`Your own anonymous id is (agent[0-9]+)\.`)

// cachingModel answers once (when its own anonymous id is not offered for a vote), then votes
// for the first answer offered; the final presentation is text. Every agent runs the same
// model (a provider's cache is per model): the agent is told by its anonymous id.
func cachingModel(r fakeprovider.Request) fakeprovider.Reply {
	vote, _ := r.Tool(ToolVote)
	me := ""
	if m := ownAnon.FindStringSubmatch(r.Text()); m != nil {
		me = m[1]
	}
	switch {
	case !r.HasTool(ToolNewAnswer):
		return fakeprovider.Reply{Text: "final"}
	case !slices.Contains(vote.Enum, me):
		return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: ToolNewAnswer, Args: map[string]string{"content": "the answer of " + me}}}}
	}
	return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: ToolVote, Args: map[string]string{"agent_id": vote.Enum[0], "reason": "first"}}}}
}

// Requests are laid out stable prefix first (tools, system prompt, task, answers in config
// order, then what is the agent's own), so that with 8 agents with workspaces every vote
// request shares a common prefix of at least 80% of its bytes with another agent's, in the
// order a provider's prefix cache reads a request. Anthropic requests mark that prefix with
// cache_control; OpenAI requests carry the run's prompt_cache_key.
func TestVoteRequestsShareTheirPrefix(t *testing.T) {
	for _, typ := range []string{"chatcompletion", "claude", "openai", "gemini"} {
		t.Run(typ, func(t *testing.T) {
			const n = 8
			srv := fakeprovider.New(cachingModel)
			defer srv.Close()
			base := t.TempDir()
			cfg := &configs.Config{BaseDir: base}
			cfg.Orchestrator.SnapshotStorage = filepath.Join(base, ".massgen", "snapshots")
			cfg.Orchestrator.AgentTemporaryWorkspace = filepath.Join(base, ".massgen", "temp_workspaces")
			cfg.Orchestrator.MaxNewAnswersPerAgent = 1
			for i := range n {
				ws := filepath.Join(base, ".massgen", "workspaces", fmt.Sprintf("workspace%d", i+1))
				if err := os.MkdirAll(ws, 0o755); err != nil {
					t.Fatal(err)
				}
				cfg.Agents = append(cfg.Agents, configs.Agent{ID: fmt.Sprintf("agent_%02d", i),
					Backend: configs.Backend{Type: typ, Model: "shared-model", APIKey: "k", BaseURL: srv.BaseURL(typ), CWD: ws}})
			}
			res, err := Run(context.Background(), Options{Config: cfg, Task: "Write a haiku about caching.", RunDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Votes) != n {
				t.Fatalf("%d votes", len(res.Votes))
			}
			keys := map[any]bool{}
			for _, r := range srv.Requests() {
				var body map[string]any
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatal(err)
				}
				switch typ {
				case "claude": // breakpoints on the stable prefix
					if !bytes.Contains(r.Body, []byte(`"cache_control":{"type":"ephemeral"}`)) {
						t.Errorf("an Anthropic request without cache_control: %.300s", r.Body)
					}
				case "openai": // one prompt_cache_key for the run
					keys[body["prompt_cache_key"]] = true
				}
			}
			if typ == "openai" && (len(keys) != 1 || keys[nil]) {
				t.Errorf("prompt_cache_key values: %v, want one for the run", keys)
			}
			var votes [][]byte
			for _, r := range srv.Requests() {
				if v, ok := r.Tool(ToolVote); ok && len(v.Enum) == n {
					votes = append(votes, r.CacheOrder())
				}
			}
			if len(votes) < n {
				t.Fatalf("%d vote requests seeing every answer, want %d", len(votes), n)
			}
			least := 1.0
			for i, v := range votes {
				best := 0
				for j, w := range votes {
					if i != j {
						best = max(best, commonPrefixLen(v, w))
					}
				}
				share := float64(best) / float64(len(v))
				least = min(least, share)
				if share < 0.8 {
					t.Errorf("vote request %d shares %d of its %d bytes (%.0f%%) with another, want at least 80%%", i, best, len(v), 100*share)
				}
			}
			t.Logf("%d vote requests: each shares at least %.0f%% of its bytes with another", len(votes), 100*least)
		})
	}
}

func commonPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
