package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// An agent finds another agent's work by listing, not by a known name (issue 16): with the
// README layout (`--context .`), beta asks list_allowed_directories for its roots, lists its temp
// workspace with directory_tree, picks the file alpha wrote there (under an anonymous id), reads
// it and quotes it in its answer, which wins and is presented.
func TestAgentFindsOtherWorkByListing(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "index.html"), "original")
	const quote = "The tide tables say high water at 6:42."
	const fileName = "tide_notes_7f3a.txt" // beta is never told this name
	answerRE := regexp.MustCompile(`<(agent\d+)>\\nQuote: `)
	p := newProvider(t, map[string]func(turn) reply{
		"model-a": func(tr turn) reply {
			switch {
			case tr.final:
				return reply{text: "alpha should not present"}
			case len(tr.answers) == 0:
				return reply{calls: []toolCall{
					tc("write_file", map[string]any{"path": fileName, "content": quote + "\n"}),
					tc("new_answer", map[string]any{"content": "I wrote my notes in a file in my workspace."}),
				}}
			}
			m := answerRE.FindSubmatch(tr.raw)
			if m == nil {
				return reply{block: true} // wait for beta's answer (the restart brings it)
			}
			return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": string(m[1]), "reason": "it quotes the notes"})}}
		},
		"model-b": func(tr turn) reply {
			if tr.final {
				m := regexp.MustCompile(`Quote: ([^"\\]*)`).FindSubmatch(tr.raw)
				if m == nil {
					return reply{text: "no quote found"}
				}
				return reply{text: "Final: " + string(m[1])}
			}
			if len(tr.answers) == 0 {
				return reply{block: true} // wait until alpha answered
			}
			if m := answerRE.FindSubmatch(tr.raw); m != nil {
				return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": string(m[1]), "reason": "mine quotes the notes"})}}
			}
			switch tr.step {
			case 0:
				return reply{calls: []toolCall{tc("list_allowed_directories", map[string]any{})}}
			case 1:
				temp := tempRoot(tr.results)
				if temp == "" {
					return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "no temp workspace listed: " + strings.Join(tr.results, " ")})}}
				}
				return reply{calls: []toolCall{tc("directory_tree", map[string]any{"path": temp})}}
			case 2:
				var tree struct {
					Path string `json:"path"`
					Tree []node `json:"tree"`
				}
				if len(tr.results) != 1 || !decodeResult(tr.results[0], &tree) {
					return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "bad tree: " + strings.Join(tr.results, " ")})}}
				}
				f := findTxt(tree.Tree, "")
				if f == "" {
					return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "no file found in " + tr.results[0]})}}
				}
				return reply{calls: []toolCall{tc("read_file", map[string]any{"path": tree.Path + "/" + f})}}
			default:
				var rf struct {
					Content string `json:"content"`
				}
				if len(tr.results) != 1 || !decodeResult(tr.results[0], &rf) || rf.Content == "" {
					return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "read failed: " + strings.Join(tr.results, " ")})}}
				}
				return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "Quote: " + strings.TrimSpace(rf.Content)})}}
			}
		},
	})
	cfg := "agents:\n" + agentYAML("alpha_real", "model-a", p.URL(), "workspace1") + agentYAML("beta_real", "model-b", p.URL(), "workspace2") +
		"orchestrator:\n  snapshot_storage: snapshots\n  agent_temporary_workspace: temp_workspaces\n  timeout_seconds: 90\n"
	writeFile(t, filepath.Join(dir, "cfg.yaml"), cfg)
	res := run(t, dir, "--config", "cfg.yaml", "--context", ".", "--display", "plain", "Find the tide notes")
	if res.code != 0 {
		t.Fatalf("exit %d, stdout %q\n%s", res.code, res.stdout, res.stderr)
	}
	if res.stdout != "Final: "+quote+"\n" {
		t.Fatalf("stdout = %q, want the quote\n%s", res.stdout, res.stderr)
	}
	// beta never named the file: it found it by listing.
	for i, body := range p.requests("model-b") {
		if i == 0 {
			continue
		}
		var req chatRequest
		_ = json.Unmarshal(body, &req)
		for _, m := range req.Messages {
			for _, c := range m.ToolCalls {
				if c.Function.Name == "read_file" && !strings.Contains(c.Function.Arguments, "/agent1/"+fileName) && !strings.Contains(c.Function.Arguments, "/agent2/"+fileName) {
					t.Errorf("read_file of %s", c.Function.Arguments)
				}
			}
		}
	}
	assertNoLeak(t, p, map[string]string{"model-a": "alpha_real", "model-b": "beta_real"})
}

type node struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Children []node `json:"children"`
}

// findTxt is the first .txt file in a directory_tree result (slash path below its root).
func findTxt(ns []node, prefix string) string {
	for _, n := range ns {
		if n.Type == "file" && strings.HasSuffix(n.Name, ".txt") {
			return prefix + n.Name
		}
		if f := findTxt(n.Children, prefix+n.Name+"/"); f != "" {
			return f
		}
	}
	return ""
}

// tempRoot is the temp workspace in a list_allowed_directories result.
func tempRoot(results []string) string {
	var out struct {
		Roots []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"roots"`
	}
	if len(results) != 1 || !decodeResult(results[0], &out) {
		return ""
	}
	for _, r := range out.Roots {
		if r.Kind == "temp workspace" {
			return r.Path
		}
	}
	return ""
}

// decodeResult decodes a tool result as the model receives it: a message content (a JSON string)
// holding the tool's JSON object.
func decodeResult(raw string, v any) bool {
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		s = raw
	}
	return json.Unmarshal([]byte(s), v) == nil
}
