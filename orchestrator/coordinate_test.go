package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/configs"
)

// A answers first; B, interrupted by that answer, is restarted and votes for it; A votes for
// itself; A presents.
func TestTwoAgentsAnswerVotePresent(t *testing.T) {
	h := newHarness(t, "alice", "bob")
	bobWorking := make(chan struct{})
	h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("final from alice"), nil
		case len(c.answers()) == 0:
			<-bobWorking
			return answerResp("hello from alice"), nil
		default:
			return voteResp("agent1", "mine is fine"), nil
		}
	}
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if len(c.answers()) == 0 {
			close(bobWorking)
			return block(ctx) // working when alice answers: restarted
		}
		return voteResp("agent1", "alice's is good"), nil
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner != "alice" || res.WinnerAnon != "agent1" || res.FinalAnswer != "final from alice" {
		t.Fatalf("result = %+v", res)
	}
	if res.Votes["alice"] != "alice" || res.Votes["bob"] != "alice" {
		t.Errorf("votes = %v", res.Votes)
	}
	if res.EndedEarly != "" {
		t.Errorf("EndedEarly = %q", res.EndedEarly)
	}
	if len(h.ev.of(EventRestart, "bob")) == 0 {
		t.Error("bob was not restarted")
	}
	if u := res.Usage["alice"]; u.InputTokens == 0 {
		t.Errorf("usage = %v", res.Usage)
	}
	// The vote enum lists exactly the agents with answers.
	for _, req := range h.rec.get("bob") {
		for _, tool := range req.Tools {
			if tool.Name == ToolVote {
				enum := tool.Parameters["properties"].(map[string]any)["agent_id"].(map[string]any)["enum"].([]string)
				if strings.Join(enum, ",") != "agent1" {
					t.Errorf("vote enum = %v", enum)
				}
			}
		}
	}
	for _, id := range []string{"alice", "bob"} {
		for i, req := range h.rec.get(id) {
			if req.Phase == PhaseCoordination && hasTool(req, ToolVote) != (req.Vars["ANSWERS"] != "") {
				t.Errorf("request %d to %s: vote offered = %v with answers %q", i, id, hasTool(req, ToolVote), req.Vars["ANSWERS"])
			}
		}
	}
	if ev := h.ev.of(EventFinal, ""); len(ev) != 1 || ev[0].Text != "final from alice" {
		t.Errorf("final events = %v", ev)
	}
}

func hasTool(req backends.Request, name string) bool {
	for _, t := range req.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Both answer and vote for themselves: a tie goes to the answer posted first.
func TestTieGoesToFirstAnswer(t *testing.T) {
	for _, first := range []string{"alice", "bob"} {
		t.Run(first+" first", func(t *testing.T) {
			h := newHarness(t, "alice", "bob")
			self := map[string]string{"alice": "agent1", "bob": "agent2"}
			for _, id := range []string{"alice", "bob"} {
				h.scripts[id] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
					n := len(c.answers())
					switch {
					case c.final():
						return textResp("final " + id), nil
					case n == 0 && id != first:
						return block(ctx) // the other one answers first
					case n == 2:
						return voteResp(self[id], "mine"), nil
					case strings.Contains(c.req.Vars["ANSWERS"], self[id]):
						return block(ctx) // wait for the other answer
					default:
						return answerResp("answer of " + id), nil
					}
				}
			}
			res, err := h.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Winner != first {
				t.Fatalf("winner = %s, want %s (votes %v)", res.Winner, first, res.Votes)
			}
		})
	}
}

// An agent that had voted votes again after a new answer.
func TestVotedAgentVotesAgainAfterNewAnswer(t *testing.T) {
	h := newHarness(t, "alice", "bob", "carol")
	bobVoted := make(chan struct{})
	h.ev.on = func(ev Event) {
		if ev.Kind == EventVote && ev.Agent == "bob" && len(h.ev.of(EventVote, "bob")) == 1 {
			close(bobVoted)
		}
	}
	h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("final alice"), nil
		case len(c.answers()) == 0:
			return answerResp("alice's answer"), nil
		case len(c.answers()) == 1:
			return block(ctx) // until carol answers
		default:
			return voteResp("agent3", "carol improved it"), nil
		}
	}
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch len(c.answers()) {
		case 0:
			return block(ctx)
		case 1:
			return voteResp("agent1", "fine"), nil
		default:
			return voteResp("agent3", "better"), nil
		}
	}
	h.scripts["carol"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch len(c.answers()) {
		case 0:
			return block(ctx)
		case 1:
			select { // answer only after bob voted
			case <-bobVoted:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return answerResp("carol's better answer"), nil
		default:
			return voteResp("agent3", "mine"), nil
		}
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner != "carol" {
		t.Fatalf("winner = %s, votes %v", res.Winner, res.Votes)
	}
	if got := len(h.ev.of(EventVote, "bob")); got != 2 {
		t.Errorf("bob voted %d times, want 2", got)
	}
	if res.Votes["bob"] != "carol" {
		t.Errorf("bob's vote = %s", res.Votes["bob"])
	}
}

// Invalid workflow calls get an error result saying what to do, up to three retries, then the
// agent is stopped with the reason.
func TestInvalidWorkflowCalls(t *testing.T) {
	twoVotes := &backends.Response{ToolCalls: []backends.ToolCall{
		call("1", ToolVote, map[string]string{"agent_id": "agent1", "reason": "x"}),
		call("2", ToolVote, map[string]string{"agent_id": "agent1", "reason": "y"}),
	}}
	voteAndAnswer := &backends.Response{ToolCalls: []backends.ToolCall{
		call("1", ToolVote, map[string]string{"agent_id": "agent1", "reason": "x"}),
		call("2", ToolNewAnswer, map[string]string{"content": "z"}),
	}}
	tests := []struct {
		name string
		// invalid is what bob sends once the first answer exists (withAnswer) or from the start.
		invalid    *backends.Response
		withAnswer bool
		maxAnswers int
		bobFirst   *backends.Response // a valid first answer (for the max-answers case)
		want       string
	}{
		{name: "two votes", invalid: twoVotes, withAnswer: true, want: "voted more than once"},
		{name: "vote and answer", invalid: voteAndAnswer, withAnswer: true, want: "vote and new_answer in the same reply"},
		{name: "vote without answers", invalid: voteResp("agent1", "x"), want: "no answers to vote for"},
		{name: "unknown id", invalid: voteResp("agent7", "x"), withAnswer: true, want: `agent_id is not an agent with an answer; vote for one of: agent1`},
		{name: "real id", invalid: voteResp("alice", "x"), withAnswer: true, want: `vote for one of: agent1`},
		{name: "identical answer", invalid: answerResp("the first answer"), withAnswer: true, want: "identical to agent1's existing answer"},
		{name: "no workflow tool", invalid: textResp("I think hello"), withAnswer: true, want: "must finish by calling a workflow tool"},
		{name: "answer past the maximum", invalid: answerResp("another answer"), withAnswer: true, maxAnswers: 1, bobFirst: answerResp("second answer"), want: "maximum of 1 new answers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "alice", "bob")
			h.cfg.Orchestrator.MaxNewAnswersPerAgent = tt.maxAnswers
			bobStopped := make(chan struct{})
			h.ev.on = func(ev Event) {
				if ev.Kind == EventStopped && ev.Agent == "bob" {
					close(bobStopped)
				}
			}
			h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
				switch {
				case c.final():
					return textResp("final"), nil
				case !tt.withAnswer && len(c.answers()) == 0:
					select { // answer only once bob has given up
					case <-bobStopped:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return answerResp("the first answer"), nil
				case len(c.answers()) == 0:
					return answerResp("the first answer"), nil
				default:
					return voteResp("agent1", "mine"), nil
				}
			}
			bobAnswered := false
			h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
				if tt.withAnswer && len(c.answers()) == 0 {
					return block(ctx)
				}
				if tt.bobFirst != nil && !bobAnswered {
					// (If this answer is superseded by a restart, the invalid one below
					// becomes bob's first answer and the next one is refused the same way.)
					bobAnswered = true
					return tt.bobFirst, nil
				}
				return tt.invalid, nil
			}
			res, err := h.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			inv := h.ev.of(EventInvalid, "bob")
			if len(inv) != maxRetries+1 {
				t.Fatalf("%d invalid events, want %d", len(inv), maxRetries+1)
			}
			if !strings.Contains(inv[0].Text, tt.want) {
				t.Errorf("problem = %q, want %q", inv[0].Text, tt.want)
			}
			stopped := h.ev.of(EventStopped, "bob")
			if len(stopped) != 1 || !strings.Contains(stopped[0].Text, tt.want) {
				t.Errorf("stopped = %v", stopped)
			}
			// The model was told, in a tool result (or a user message without tool calls).
			reqs := h.rec.get("bob")
			last := reqs[len(reqs)-1].Messages
			msg := last[len(last)-1]
			if !strings.Contains(msg.Content, tt.want) || !strings.Contains(msg.Content, "attempt 3 of 4") {
				t.Errorf("last message to the model = %+v", msg)
			}
			assertNoLeak(t, h.rec, []string{"alice", "bob"})
			if res == nil || res.Winner != "alice" || !strings.Contains(res.EndedEarly, "bob") {
				t.Errorf("result = %+v", res)
			}
		})
	}
}

// A model that corrects itself after an error result is accepted.
func TestInvalidThenValid(t *testing.T) {
	h := newHarness(t, "solo")
	h.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("presented"), nil
		case c.n < 2:
			return textResp("no tool"), nil
		default:
			return answerResp("the answer"), nil
		}
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalAnswer != "presented" || res.Answers["solo"] != "the answer" || res.EndedEarly != "" {
		t.Fatalf("result = %+v", res)
	}
	if n := len(h.ev.of(EventInvalid, "solo")); n != 2 {
		t.Errorf("%d invalid events, want 2", n)
	}
}

// A backend's retry (after a 429) is reported on the event stream.
func TestRetryIsReported(t *testing.T) {
	h := newHarness(t, "solo")
	h.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if c.final() {
			return textResp("done"), nil
		}
		c.onEvent(backends.Event{Kind: backends.EventRetry, Text: "HTTP 429, retrying in 1s"})
		return answerResp("x"), nil
	}
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ev := h.ev.of(EventRetry, "solo"); len(ev) != 1 || ev[0].Text != "HTTP 429, retrying in 1s" {
		t.Errorf("retry events = %+v", ev)
	}
}

// A single agent answers and presents without voting (no vote tool offered).
func TestSingleAgentSkipsVoting(t *testing.T) {
	h := newHarness(t, "solo")
	h.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if hasTool(c.req, ToolVote) {
			t.Error("vote offered to a single agent")
		}
		if c.final() {
			if hasTool(c.req, ToolNewAnswer) {
				t.Error("workflow tool offered in the final phase")
			}
			return textResp("final"), nil
		}
		return answerResp("only answer"), nil
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner != "solo" || res.FinalAnswer != "final" || len(res.Votes) != 0 {
		t.Fatalf("result = %+v", res)
	}
	if n := len(h.rec.get("solo")); n != 2 {
		t.Errorf("%d model calls, want 2 (answer, present)", n)
	}
}

// The overall timeout ends coordination with the best answer so far, and says so.
func TestOverallTimeout(t *testing.T) {
	h := newHarness(t, "alice", "bob")
	h.cfg.Orchestrator.TimeoutSeconds = 1
	h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("final alice"), nil
		case len(c.answers()) == 0:
			return answerResp("alice's answer"), nil
		default:
			return voteResp("agent1", "mine"), nil
		}
	}
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		return block(ctx) // never decides
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Winner != "alice" || res.FinalAnswer != "final alice" || !strings.Contains(res.EndedEarly, "overall timeout") {
		t.Fatalf("result = %+v", res)
	}
}

// agent_timeout_seconds stops a stuck agent with the reason shown; the others finish (the time
// they wait for it does not count against theirs).
func TestAgentTimeout(t *testing.T) {
	h := newHarness(t, "alice", "bob")
	h.cfg.Orchestrator.AgentTimeoutSeconds = 1
	h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("final alice"), nil
		case len(c.answers()) == 0:
			return answerResp("alice's answer"), nil
		default:
			return voteResp("agent1", "mine"), nil
		}
	}
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		return block(ctx)
	}
	start := time.Now()
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	stopped := h.ev.of(EventStopped, "bob")
	if len(stopped) != 1 || !strings.Contains(stopped[0].Text, "agent timeout") {
		t.Fatalf("stopped = %v", stopped)
	}
	if res.Winner != "alice" || !strings.Contains(res.EndedEarly, "bob (agent timeout") {
		t.Fatalf("result = %+v", res)
	}
	// alice waited for bob longer than her own timeout: waiting does not count, she voted.
	if len(h.ev.of(EventStopped, "alice")) != 0 || res.Votes["alice"] != "alice" {
		t.Errorf("alice stopped or did not vote: %v, votes %v", h.ev.of(EventStopped, "alice"), res.Votes)
	}
	if time.Since(start) > 20*time.Second {
		t.Error("the agent timeout did not end the run")
	}
}

// Cancelling the context stops every agent and Run returns context.Canceled.
func TestCancel(t *testing.T) {
	h := newHarness(t, "alice", "bob")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{}, 2)
	for _, id := range []string{"alice", "bob"} {
		h.scripts[id] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
			started <- struct{}{}
			return block(ctx)
		}
	}
	go func() {
		<-started
		<-started
		cancel()
	}()
	res, err := h.run(ctx)
	if !errors.Is(err, context.Canceled) || res == nil || !res.Cancelled || len(res.Work) != 2 {
		t.Fatalf("res, err = %+v, %v; want a cancelled partial result listing every agent's work", res, err)
	}
	if len(h.ev.of(EventDone, "")) != 1 {
		t.Error("no done event")
	}
}

// Every agent failing leaves no answer: a clear error, not a hang.
func TestBackendErrorsStopAgents(t *testing.T) {
	h := newHarness(t, "alice", "bob")
	for _, id := range []string{"alice", "bob"} {
		h.scripts[id] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
			return nil, errors.New("HTTP 401: bad key")
		}
	}
	_, err := h.run(context.Background())
	if !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("err = %v", err)
	}
	if s := h.ev.of(EventStopped, "alice"); len(s) != 1 || !strings.Contains(s[0].Text, "401") {
		t.Errorf("stopped = %v", s)
	}
}

// Models never see other agents' real ids: not in prompts, tool specs, error results or vars.
func TestAnonymityInRequests(t *testing.T) {
	h := newHarness(t, "alice-real", "bob-real")
	h.scripts["alice-real"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("final"), nil
		case len(c.answers()) == 0:
			return answerResp("first answer"), nil
		case c.n < 3:
			return voteResp("bob-real", "try a real id"), nil // refused: unknown id
		default:
			return voteResp("agent1", "mine"), nil
		}
	}
	h.scripts["bob-real"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch len(c.answers()) {
		case 0:
			return block(ctx)
		case 1:
			if c.n < 3 {
				return answerResp("first answer"), nil // identical: refused
			}
			return answerResp("second answer"), nil
		default:
			return voteResp("agent2", "mine"), nil
		}
	}
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertNoLeak(t, h.rec, []string{"alice-real", "bob-real"})
}

// assertNoLeak fails if any request to an agent mentions another agent's real id.
func assertNoLeak(t *testing.T, rec *recorder, ids []string) {
	t.Helper()
	for _, self := range ids {
		reqs := rec.get(self)
		if len(reqs) == 0 {
			t.Fatalf("no requests recorded for %s", self)
		}
		for i, req := range reqs {
			text := requestText(req)
			for _, other := range ids {
				if j := strings.Index(text, other); other != self && j >= 0 {
					t.Errorf("request %d to %s mentions %q: ...%s...", i, self, other, text[max(0, j-200):min(len(text), j+100)])
				}
			}
		}
	}
}

func requestText(req backends.Request) string {
	var b strings.Builder
	b.WriteString(req.System)
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			continue // the model's own words
		}
		b.WriteString(m.Content + m.ToolName + m.ToolCallID)
		for _, tc := range m.ToolCalls {
			b.WriteString(tc.Name + string(tc.Arguments))
		}
	}
	for _, t := range req.Tools {
		b.WriteString(t.Name + t.Description)
		params, _ := json.Marshal(t.Parameters)
		b.Write(params)
	}
	for k, v := range req.Vars {
		b.WriteString(k + "=" + v + "\n")
	}
	return b.String()
}

// Earlier turns of a session come before the task, as user/assistant messages.
func TestHistoryIsSent(t *testing.T) {
	h := newHarness(t, "solo")
	h.scripts["solo"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if c.final() {
			return textResp("turn 2 answer"), nil
		}
		return answerResp("draft"), nil
	}
	o := h.options(context.Background())
	o.History = []Exchange{{User: "make a page", Assistant: "made page.html"}}
	if _, err := h.runOptions(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, req := range h.rec.get("solo") {
		m := req.Messages
		if len(m) < 3 || m[0].Role != "user" || m[0].Content != "make a page" || m[1].Role != "assistant" || m[1].Content != "made page.html" || !strings.Contains(m[2].Content, "write a greeting") {
			t.Errorf("messages = %+v", m)
		}
	}
}

// Bad setups fail before any agent starts, with a message naming the agent and the cause.
func TestRunSetupErrors(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{name: "no config", o: Options{}, want: "no config"},
		{name: "no agents", o: Options{Config: &configs.Config{BaseDir: base}}, want: "no agents"},
		{name: "missing key", o: Options{
			Config:    &configs.Config{BaseDir: base, Agents: []configs.Agent{{ID: "a1", Backend: configs.Backend{Type: "claude", Model: "m"}}}},
			LookupEnv: func(string) (string, bool) { return "", false },
		}, want: `agent "a1" (agents[0]): backend "claude": no API key: set ANTHROPIC_API_KEY`},
		{name: "unknown backend", o: Options{
			Config:    &configs.Config{BaseDir: base, Agents: []configs.Agent{{ID: "a1", Backend: configs.Backend{Type: "opnai"}}}},
			LookupEnv: func(string) (string, bool) { return "", false },
		}, want: `unknown backend type "opnai"`},
		{name: "scripted demo without a context path", o: Options{
			Config: &configs.Config{BaseDir: base, Agents: []configs.Agent{{ID: "a1", Backend: configs.Backend{Type: "scripted",
				Script: []configs.ScriptStep{{ToolCalls: []configs.ScriptToolCall{{Name: "write_file", Args: map[string]any{"path": "${CONTEXT_0}/x"}}}}}}}}},
		}, want: `agent "a1" (agents[0]): its script uses ${CONTEXT_0} but 0 context path(s) are configured: add one with --context DIR`},
		{name: "backend constructor fails", o: Options{
			Config:     &configs.Config{BaseDir: base, Agents: []configs.Agent{{ID: "a1"}}},
			NewBackend: func(configs.Agent) (backends.Backend, error) { return nil, errors.New("boom") },
		}, want: `agent "a1" (agents[0]): backend: boom`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evs events
			tt.o.Events = evs.stream()
			res, err := Run(context.Background(), tt.o)
			evs.finish(tt.o.Events)
			if err == nil || !strings.Contains(err.Error(), tt.want) || res != nil {
				t.Fatalf("Run = %v, %v; want error containing %q", res, err, tt.want)
			}
			if len(evs.of(EventStart, "")) != 0 {
				t.Error("an agent started")
			}
		})
	}
}
