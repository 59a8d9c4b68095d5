package session

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A stopped or cancelled turn keeps every agent's answer and work: the snapshots are copied
// into turn_N/agents/<anon>/, metadata.json lists them with the status and who stopped the
// turn, and a reloaded session gives them back (History for the next turn, LastWork for its
// read-only view). Costs by kind round-trip; an unknown cost stays null, never 0.
func TestStoppedTurnKeepsWork(t *testing.T) {
	base := t.TempDir()
	st, err := Open(filepath.Join(base, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	ses, err := st.New(time.Date(2025, 9, 28, 14, 30, 22, 0, time.Local))
	if err != nil {
		t.Fatal(err)
	}
	snapA := filepath.Join(base, "snapshots", "alice")
	writeFile(t, filepath.Join(snapA, "draft.md"), "alice's draft")
	cost := 0.0123
	turn := Turn{
		Task: "write", Answer: "", Agents: []string{"alice", "bob"}, Status: StatusCancelled,
		Tokens: map[string]TokenUsage{"alice": {Input: 100, CachedInput: 40, Output: 10, Reasoning: 3, CostUSD: &cost}, "bob": {Input: 5}},
		Work: []AgentWork{
			{Agent: "alice", Anon: "agent1", Answer: "alice's answer", Snapshot: snapA},
			{Agent: "bob", Anon: "agent2"},
		},
	}
	dir, err := ses.SaveTurn(turn)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "agents", "agent1", "draft.md")); got != "alice's draft" {
		t.Errorf("kept work = %q", got)
	}
	var md map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "metadata.json"))), &md); err != nil {
		t.Fatal(err)
	}
	if md["status"] != "cancelled" || md["agents_work"] == nil {
		t.Errorf("metadata: status %v, agents_work %v", md["status"], md["agents_work"])
	}
	tokens := md["tokens"].(map[string]any)
	if a := tokens["alice"].(map[string]any); a["cost_usd"] != 0.0123 || a["cached_input"] != 40.0 || a["reasoning"] != 3.0 {
		t.Errorf("alice's tokens: %v", a)
	}
	if b := tokens["bob"].(map[string]any); b["cost_usd"] != nil {
		t.Errorf("bob's unknown cost = %v, want null", b["cost_usd"])
	}
	if total := md["total_tokens"].(map[string]any); total["cost_usd"] != nil || total["cached_input"] != 40.0 {
		t.Errorf("total: %v", total)
	}

	again, err := st.Get(ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	h := again.History()
	if len(h) != 1 || h[0].Status != StatusCancelled || len(h[0].Work) != 2 || h[0].Work[0].Answer != "alice's answer" {
		t.Errorf("history = %+v", h)
	}
	if w := again.LastWork(); w != filepath.Join(dir, "agents") {
		t.Errorf("LastWork = %q", w)
	}
	if tt := again.Turns()[0]; tt.Work[0].Snapshot != filepath.Join(dir, "agents", "agent1") || tt.Work[1].Snapshot != "" {
		t.Errorf("work = %+v", tt.Work)
	}
	if sum := readFile(t, filepath.Join(ses.Dir, "SESSION_SUMMARY.txt")); !strings.Contains(sum, "Ended: cancelled") || !strings.Contains(sum, "alice (agent1): answered, turn_1/agents/agent1/") {
		t.Errorf("summary:\n%s", sum)
	}

	// An anonymous id that is not one cannot name a folder.
	turn.Work = []AgentWork{{Agent: "x", Anon: "../x", Snapshot: snapA}}
	if _, err := ses.SaveTurn(turn); err == nil {
		t.Error("a work folder named ../x was accepted")
	}
}
