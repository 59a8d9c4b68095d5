package orchestrator

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
	"github.com/massgen-go/massgen/internal/vocab"
)

// MassGen's coordination options, each shown against the fake provider: real backends speaking
// a provider's wire protocol to an httptest server, the model deciding from what it was sent.

// fakeKeys are the API keys the backends look for (the fake provider takes any).
func fakeKeys(name string) (string, bool) {
	switch name {
	case "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY":
		return "test-key", true
	}
	return "", false
}

// wireHarness is a harness whose agents use the real backend typ against srv (each agent's
// model name is its id).
func wireHarness(t *testing.T, typ string, srv *fakeprovider.Server, ids ...string) *harness {
	t.Helper()
	h := newHarness(t, ids...)
	for i := range h.cfg.Agents {
		b := &h.cfg.Agents[i].Backend
		b.Type, b.Model, b.BaseURL = typ, h.cfg.Agents[i].ID, srv.BaseURL(typ)
	}
	return h
}

func (h *harness) wireRun(ctx context.Context) (*Result, error) {
	o := h.options(ctx)
	o.NewBackend, o.LookupEnv = nil, fakeKeys
	return h.runOptions(ctx, o)
}

func newFake(t *testing.T, m fakeprovider.Model) *fakeprovider.Server {
	srv := fakeprovider.New(m)
	t.Cleanup(srv.Close)
	return srv
}

// coordinationRequests are the requests made while agents coordinate (new_answer offered).
func coordinationRequests(srv *fakeprovider.Server, model string) []fakeprovider.Request {
	var out []fakeprovider.Request
	for _, r := range srv.Requests() {
		if r.HasTool(ToolNewAnswer) && (model == "" || r.Model == model) {
			out = append(out, r)
		}
	}
	return out
}

// voting_sensitivity and answer_novelty_requirement put MassGen's wording into the system
// prompt the provider receives, on every protocol.
func TestVotingSensitivityAndNoveltyWording(t *testing.T) {
	levels := []struct {
		level       vocab.Strictness
		vote, novel string // text the system prompt must hold ("" for none)
		not         []string
	}{
		{"", "If YES, use the vote tool", "", []string{"exceptionally well", "meaningfully different", "SUBSTANTIALLY"}},
		{vocab.Lenient, "If YES, use the vote tool", "", []string{"exceptionally well", "meaningfully different"}},
		{vocab.Balanced, "Only use the vote tool if the best answer is strong and complete", "it must be meaningfully different from existing answers", []string{"exceptionally well", "SUBSTANTIALLY"}},
		{vocab.Strict, "Only use the vote tool if the best answer meets high standards of excellence", "New answers must be SUBSTANTIALLY different", []string{"strong and complete", "meaningfully different"}},
	}
	for _, typ := range []string{"chatcompletion", "openai", "claude", "gemini"} {
		for _, lv := range levels {
			t.Run(typ+"/"+string(lv.level), func(t *testing.T) {
				srv := newFake(t, fakeprovider.Agreeable())
				h := wireHarness(t, typ, srv, "alice", "bob")
				h.cfg.Orchestrator.VotingSensitivity = vocab.VotingSensitivity(lv.level)
				h.cfg.Orchestrator.AnswerNoveltyRequirement = lv.level
				if _, err := h.wireRun(t.Context()); err != nil {
					t.Fatal(err)
				}
				reqs := coordinationRequests(srv, "")
				if len(reqs) == 0 {
					t.Fatal("no coordination request reached the provider")
				}
				for _, r := range reqs {
					if !strings.Contains(r.System, lv.vote) || (lv.novel != "" && !strings.Contains(r.System, lv.novel)) {
						t.Fatalf("system prompt lacks %q / %q:\n%s", lv.vote, lv.novel, r.System)
					}
					for _, s := range lv.not {
						if strings.Contains(r.System, s) {
							t.Fatalf("system prompt has %q at level %q", s, lv.level)
						}
					}
				}
			})
		}
	}
}

// answer_novelty_requirement refuses a new answer sharing too many words with an existing one;
// the model is told why and votes instead. Lenient (MassGen's default) accepts it.
func TestAnswerNoveltyRequirement(t *testing.T) {
	const first = "The capital of France is Paris, a city on the Seine with the Eiffel Tower."
	const similar = "The capital of France is Paris, a large city on the Seine with the Eiffel Tower."
	for _, tt := range []struct {
		level    vocab.Strictness
		accepted bool
	}{
		{vocab.Strict, false},
		{vocab.Balanced, false},
		{vocab.Lenient, true},
	} {
		t.Run(string(tt.level), func(t *testing.T) {
			aliceAnswered := make(chan struct{})
			var once sync.Once
			srv := newFake(t, func(r fakeprovider.Request) fakeprovider.Reply {
				vote, voting := r.Tool(ToolVote)
				switch {
				case !r.HasTool(ToolNewAnswer):
					return fakeprovider.Reply{Text: "final"}
				case r.Model == "alice" && !voting:
					return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: ToolNewAnswer, Args: map[string]string{"content": first}}}}
				case r.Model == "alice":
					return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: ToolVote, Args: map[string]string{"agent_id": "agent1", "reason": "mine"}}}}
				case !voting:
					<-aliceAnswered // bob works until alice's answer is in
					fallthrough
				case !strings.Contains(r.Last().Text, "too similar") && len(vote.Enum) < 2:
					return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: ToolNewAnswer, Args: map[string]string{"content": similar}}}}
				default:
					return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: ToolVote, Args: map[string]string{"agent_id": "agent1", "reason": "alice's is as good"}}}}
				}
			})
			h := wireHarness(t, "chatcompletion", srv, "alice", "bob")
			h.cfg.Orchestrator.AnswerNoveltyRequirement = tt.level
			h.ev.on = func(ev Event) {
				if ev.Kind == EventAnswer && ev.Agent == "alice" {
					once.Do(func() { close(aliceAnswered) })
				}
			}
			res, err := h.wireRun(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			_, bobAnswered := res.Answers["bob"]
			if bobAnswered != tt.accepted {
				t.Fatalf("bob's similar answer accepted = %v, want %v (answers %v)", bobAnswered, tt.accepted, res.Answers)
			}
			if tt.accepted {
				return
			}
			told := false
			for _, r := range coordinationRequests(srv, "bob") {
				told = told || strings.Contains(r.Last().Text, "your answer is too similar to existing answers")
			}
			if !told {
				t.Error("bob was never told that his answer was too similar")
			}
			if res.Votes["bob"] != "alice" || res.Winner != "alice" {
				t.Errorf("votes %v, winner %s: want bob voting for alice", res.Votes, res.Winner)
			}
		})
	}
}

func TestWordOverlap(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want float64
	}{
		{"a b c d", "a b c d", 1},
		{"A b", "a B", 1},
		{"a b c d", "a b c e", 3.0 / 5},
		{"a b", "c d", 0},
		{"", "a", 0},
		{"", "  ", 1},
	} {
		if got := wordOverlap(tt.a, tt.b); got != tt.want {
			t.Errorf("wordOverlap(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// skip_coordination_rounds: the first agent presents at once; no agent coordinates.
func TestSkipCoordinationRounds(t *testing.T) {
	srv := newFake(t, fakeprovider.Agreeable())
	h := wireHarness(t, "gemini", srv, "alice", "bob")
	h.cfg.Orchestrator.SkipCoordinationRounds = true
	res, err := h.wireRun(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "alice" || reqs[0].HasTool(ToolNewAnswer) || reqs[0].HasTool(ToolVote) {
		t.Fatalf("requests = %+v, want one final presentation by alice", reqs)
	}
	if !strings.Contains(reqs[0].Text(), "There was no coordination") {
		t.Errorf("the final prompt does not say coordination was skipped:\n%s", reqs[0].Text())
	}
	if res.Winner != "alice" || res.FinalAnswer != "Final answer from alice." || len(res.Votes) != 0 || len(res.Answers) != 0 || res.Attempts != 1 {
		t.Errorf("result = %+v", res)
	}
}

// evaluations are the post-evaluation requests (restart_orchestration offered).
func evaluations(srv *fakeprovider.Server) []fakeprovider.Request {
	var out []fakeprovider.Request
	for _, r := range srv.Requests() {
		if r.HasTool(ToolRestartOrchestration) {
			out = append(out, r)
		}
	}
	return out
}

// restarter is Agreeable, except that an evaluation asks for a restart while restart(request)
// says so.
func restarter(restart func(fakeprovider.Request) bool) fakeprovider.Model {
	base := fakeprovider.Agreeable()
	return func(r fakeprovider.Request) fakeprovider.Reply {
		if r.HasTool(ToolRestartOrchestration) && restart(r) {
			return fakeprovider.Reply{Calls: []fakeprovider.Call{{Name: ToolRestartOrchestration,
				Args: map[string]string{"reason": "only one Beatle was described", "instructions": "describe John AND Paul"}}}}
		}
		return base(r)
	}
}

// coordination.max_orchestration_restarts: the winner evaluates the final answer; a restart runs
// the coordination again with the feedback in every prompt, at most max times; the last
// attempt is not evaluated.
func TestOrchestrationRestarts(t *testing.T) {
	for _, tt := range []struct {
		name             string
		max              int
		restart          bool
		attempts, evals  int
		feedbackRequests bool
	}{
		{"no restarts configured: no evaluation", 0, true, 1, 0, false},
		{"the evaluator submits", 2, false, 1, 1, false},
		{"the evaluator always restarts", 2, true, 3, 2, true},
		{"one restart allowed", 1, true, 2, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, restarter(func(fakeprovider.Request) bool { return tt.restart }))
			h := wireHarness(t, "claude", srv, "alice", "bob")
			h.cfg.Orchestrator.Coordination.MaxOrchestrationRestarts = tt.max
			res, err := h.wireRun(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if res.Attempts != tt.attempts || len(evaluations(srv)) != tt.evals {
				t.Fatalf("attempts %d, evaluations %d; want %d, %d", res.Attempts, len(evaluations(srv)), tt.attempts, tt.evals)
			}
			if n := len(h.ev.of(EventAttempt, "")); n != tt.attempts-1 {
				t.Errorf("%d attempt events, want %d", n, tt.attempts-1)
			}
			// Every attempt after the first shows the feedback; the first does not.
			var with, without int
			for _, r := range coordinationRequests(srv, "") {
				if strings.Contains(r.Text(), "<PREVIOUS ATTEMPT FEEDBACK>") {
					with++
					if !strings.Contains(r.Text(), "only one Beatle was described") || !strings.Contains(r.Text(), "describe John AND Paul") ||
						!strings.Contains(r.Text(), "Previous attempt's winning answer") {
						t.Errorf("feedback lacks the reason, the instructions or the previous answer:\n%s", r.Text())
					}
				} else {
					without++
				}
			}
			if (with > 0) != tt.feedbackRequests || without == 0 {
				t.Errorf("%d coordination requests with feedback, %d without", with, without)
			}
			if res.FinalAnswer == "" || res.Winner == "" {
				t.Errorf("result = %+v", res)
			}
		})
	}
}

// debug_final_answer replaces the answer the first evaluation judges (to force a restart); the
// second attempt's evaluation judges the real final answer.
func TestDebugFinalAnswer(t *testing.T) {
	const debug = "John Lennon was born in 1940. DEBUG-ONLY-ANSWER"
	srv := newFake(t, restarter(func(r fakeprovider.Request) bool { return strings.Contains(r.Text(), "DEBUG-ONLY-ANSWER") }))
	h := wireHarness(t, "openai", srv, "alice", "bob")
	h.cfg.Orchestrator.Coordination.MaxOrchestrationRestarts = 2
	h.cfg.Orchestrator.DebugFinalAnswer = debug
	res, err := h.wireRun(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	evals := evaluations(srv)
	if res.Attempts != 2 || len(evals) != 2 {
		t.Fatalf("attempts %d, evaluations %d; want 2, 2", res.Attempts, len(evals))
	}
	if got := evals[0].Last().Text; !strings.Contains(got, "FINAL ANSWER TO EVALUATE:\n"+debug) || strings.Contains(got, "Final answer from") {
		t.Errorf("first evaluation does not judge the debug answer:\n%s", got)
	}
	if got := evals[1].Last().Text; strings.Contains(got, "DEBUG-ONLY-ANSWER") || !strings.Contains(got, "FINAL ANSWER TO EVALUATE:\nFinal answer from") {
		t.Errorf("second evaluation does not judge the real final answer:\n%s", got)
	}
	if res.FinalAnswer != "Final answer from "+res.Winner+"." {
		t.Errorf("final answer %q", res.FinalAnswer)
	}
}

// chatMCP is an MCP server over streamable HTTP with a tool that acts on the world
// (post_message, no annotations) and one its server declares read-only (get_messages). It
// counts the calls that reach it, by tool.
type chatMCP struct {
	posts, reads atomic.Int64
}

func (c *chatMCP) start(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "chat", Version: "1"}, nil)
	type msg struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "post_message", Description: "Posts a message to the team channel."},
		func(ctx context.Context, req *mcp.CallToolRequest, a msg) (*mcp.CallToolResult, any, error) {
			c.posts.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "posted: " + a.Text}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "get_messages", Description: "Gets the channel's messages.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, a struct{}) (*mcp.CallToolResult, any, error) {
			c.reads.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "channel: (empty)"}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// coordination.enable_planning_mode: during coordination an MCP tool that may act on the world
// is not run (the model gets a note), a read-only one is; the final agent's call runs.
func TestPlanningMode(t *testing.T) {
	for _, planning := range []bool{true, false} {
		t.Run(fmt.Sprintf("planning=%v", planning), func(t *testing.T) {
			var chat chatMCP
			url := chat.start(t)
			base := fakeprovider.Agreeable()
			srv := newFake(t, func(r fakeprovider.Request) fakeprovider.Reply {
				last := r.Last()
				switch {
				case last.Role == "user" && r.HasTool("mcp__chat__post_message"): // a new execution: act first
					return fakeprovider.Reply{Calls: []fakeprovider.Call{
						{Name: "mcp__chat__get_messages"},
						{Name: "mcp__chat__post_message", Args: map[string]string{"text": "hello from " + r.Model}},
					}}
				case !r.HasTool(ToolNewAnswer) && last.Role == "tool":
					return fakeprovider.Reply{Text: "Posted the message. Last result: " + last.Text}
				}
				return base(r)
			})
			h := wireHarness(t, "chatcompletion", srv, "alice", "bob")
			for i := range h.cfg.Agents {
				h.cfg.Agents[i].Backend.MCPServers = []configs.MCPServer{{Name: "chat", Type: "streamable-http", URL: url}}
			}
			h.cfg.Orchestrator.Coordination.EnablePlanningMode = planning
			res, err := h.wireRun(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			coord := coordinationRequests(srv, "")
			if planning {
				// Only the final agent posted; both agents read during coordination.
				if chat.posts.Load() != 1 || chat.reads.Load() < 3 {
					t.Errorf("posts %d, reads %d: want 1 post (the final agent's) and reads in coordination too", chat.posts.Load(), chat.reads.Load())
				}
				noted := false
				for _, r := range coord {
					for _, m := range r.Messages {
						noted = noted || (m.Role == "tool" && strings.Contains(m.Text, "not run: planning mode: during coordination mcp__chat__post_message is not executed"))
					}
					if !strings.Contains(r.System, defaultPlanningInstruction) || !strings.Contains(r.System, "the agent presenting the final answer runs them: mcp__chat__post_message.") {
						t.Fatalf("coordination system prompt lacks the planning instruction:\n%s", r.System)
					}
				}
				if !noted {
					t.Error("no coordination request carried the planning-mode note")
				}
				if !strings.Contains(res.FinalAnswer, "posted: hello from "+res.Winner) {
					t.Errorf("final answer %q: the final agent's post did not run", res.FinalAnswer)
				}
				return
			}
			if chat.posts.Load() < 3 {
				t.Errorf("posts %d: without planning mode every agent's call runs", chat.posts.Load())
			}
			for _, r := range coord {
				if strings.Contains(r.System, defaultPlanningInstruction) {
					t.Fatal("planning instruction without planning mode")
				}
			}
		})
	}
}

// An evaluation that decides nothing (a reply without submit or restart_orchestration) keeps
// the final answer, as in MassGen.
func TestEvaluationWithoutDecisionSubmits(t *testing.T) {
	base := fakeprovider.Agreeable()
	srv := newFake(t, func(r fakeprovider.Request) fakeprovider.Reply {
		if r.HasTool(ToolRestartOrchestration) {
			return fakeprovider.Reply{Text: "Looks fine to me."}
		}
		return base(r)
	})
	h := wireHarness(t, "chatcompletion", srv, "alice", "bob")
	h.cfg.Orchestrator.Coordination.MaxOrchestrationRestarts = 1
	res, err := h.wireRun(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	evs := h.ev.of(EventEvaluation, "")
	if res.Attempts != 1 || len(evaluations(srv)) != 1 || len(evs) != 1 || !strings.Contains(evs[0].Text, "no decision") {
		t.Fatalf("attempts %d, evaluations %d, events %+v", res.Attempts, len(evaluations(srv)), evs)
	}
	if res.FinalAnswer != "Final answer from "+res.Winner+"." {
		t.Errorf("final answer %q", res.FinalAnswer)
	}
}
