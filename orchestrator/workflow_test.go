package orchestrator

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/backends"
)

// The workflow tools are offered as MassGen declares them: new_answer and vote closed to other
// properties, submit, restart_orchestration and submit_checklist open; vote's agent_id limited
// to the anonymous ids with an answer.
func TestWorkflowToolSpecs(t *testing.T) {
	tests := []struct {
		spec backends.ToolSpec
		want string
	}{
		{newAnswerSpec(), `{"additionalProperties":false,"properties":{"content":{"description":"Your complete answer.","type":"string"}},"required":["content"],"type":"object"}`},
		{voteSpec([]string{"agent1", "agent2"}), `{"additionalProperties":false,"properties":{"agent_id":{"description":"The anonymous id of the agent whose answer is best.","enum":["agent1","agent2"],"type":"string"},"reason":{"description":"Why that answer is best.","type":"string"}},"required":["agent_id","reason"],"type":"object"}`},
		{submitSpec(), `{"properties":{"confirmed":{"description":"Set to true to confirm the answer is satisfactory.","enum":[true],"type":"boolean"}},"required":["confirmed"],"type":"object"}`},
		{restartSpec(), `{"properties":{"instructions":{"description":"Detailed, actionable guidance for the agents' next attempt.","type":"string"},"reason":{"description":"Clear explanation of why the answer is insufficient (e.g. 'The task asked for two Beatles, but only John Lennon was described').","type":"string"}},"required":["reason","instructions"],"type":"object"}`},
		{checklistSpec(), `{"properties":{"report_path":{"description":"Optional: a report in your workspace explaining the scores.","type":"string"},"scores":{"description":"Scores per criterion (E1, E2, ...), per agent when several have answers.","type":"object"}},"required":["scores"],"type":"object"}`},
	}
	for _, tt := range tests {
		got, _ := json.Marshal(tt.spec.Parameters)
		if string(got) != tt.want {
			t.Errorf("%s schema\n got %s\nwant %s", tt.spec.Name, got, tt.want)
		}
		if tt.spec.Description == "" || strings.TrimSpace(tt.spec.Description) != tt.spec.Description {
			t.Errorf("%s: description %q", tt.spec.Name, tt.spec.Description)
		}
	}
	// Each offer is its own: one vote's ids are not another's.
	a, b := voteSpec([]string{"agent1"}), voteSpec([]string{"agent2"})
	if reflect.DeepEqual(a.Parameters, b.Parameters) {
		t.Error("two vote offers share their enum")
	}
}

// Workflow calls are read as MassGen reads them: what binds is taken, a missing argument is the
// handler's to judge, a wrong type is a problem told to the model.
func TestWorkflowArguments(t *testing.T) {
	p, err := voteTool.BindJSON(json.RawMessage(`{"agent_id":"agent1","extra":1}`))
	if err != nil || p.AgentID != "agent1" || p.Reason != "" {
		t.Errorf("vote without a reason, with an extra argument: %+v, %v", p, err)
	}
	if _, err := voteTool.BindJSON(json.RawMessage(`{"agent_id":1}`)); err == nil {
		t.Error("vote with a numeric agent_id binds")
	}
	if _, err := newAnswerTool.BindJSON(json.RawMessage(`[1]`)); err == nil {
		t.Error("new_answer with arguments that are not an object binds")
	}
	fb := restartFeedback(backends.ToolCall{Arguments: json.RawMessage(`{"reason":7,"instructions":"do x"}`)})
	if fb.reason != "No reason provided" || fb.instructions != "do x" {
		t.Errorf("restart takes what it can: %+v", fb)
	}
	c, _ := checklistTool.BindJSON(json.RawMessage(`{"scores":{"E1":8}}`))
	if string(c.Scores) != `{"E1":8}` {
		t.Errorf("scores = %s", c.Scores)
	}
}
