package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
)

// benchModel is the coordination benchmark's model, on the fake provider (OpenAI Chat
// Completions): each agent (the model name is its id) answers once, after steps tool-call
// replies of work, while its own anonymous id is not offered in the vote tool, and then votes
// for the first answer offered. delay[id] is how long each of its requests takes (0: zero
// latency).
func benchModel(anon map[string]string, delay map[string]time.Duration, steps int) fakeprovider.Model {
	return func(r fakeprovider.Request) fakeprovider.Reply {
		reply := fakeprovider.Reply{Delay: delay[r.Model]}
		worked := 0
		for _, m := range r.Messages {
			if m.Role == "assistant" {
				worked++
			}
		}
		me := anon[r.Model]
		vote, _ := r.Tool(ToolVote)
		switch {
		case !r.HasTool(ToolNewAnswer): // the final presentation
			reply.Text = "final"
		case !slices.Contains(vote.Enum, me) && worked < steps:
			reply.Calls = []fakeprovider.Call{{Name: "list_directory", Args: map[string]string{"path": "."}}}
		case !slices.Contains(vote.Enum, me):
			reply.Calls = []fakeprovider.Call{{Name: ToolNewAnswer, Args: map[string]string{"content": "the answer of " + me}}}
		default:
			reply.Calls = []fakeprovider.Call{{Name: ToolVote, Args: map[string]string{"agent_id": vote.Enum[0], "reason": "first"}}}
		}
		return reply
	}
}

// scenario is one coordination benchmark setting.
type scenario struct {
	agents  int
	stagger time.Duration // agent i's requests take i*stagger
	steps   int           // tool-call replies before each answer
	grace   time.Duration // restart grace (0: the default)
}

// figures are what a run cost.
type figures struct {
	requests, chars int64
	wall            time.Duration
}

// coordinate runs one coordination of sc on the fake provider (benchModel), every agent answering once and then
// voting (max_new_answers_per_agent: 1).
func coordinate(tb testing.TB, sc scenario) (figures, *Result) {
	tb.Helper()
	anon, delay := map[string]string{}, map[string]time.Duration{}
	srv := fakeprovider.New(benchModel(anon, delay, sc.steps))
	defer srv.Close()
	base := tb.TempDir()
	cfg := &configs.Config{BaseDir: base}
	cfg.Orchestrator.SnapshotStorage = base + "/.massgen/snapshots"
	cfg.Orchestrator.AgentTemporaryWorkspace = base + "/.massgen/temp_workspaces"
	cfg.Orchestrator.MaxNewAnswersPerAgent = 1
	for i := range sc.agents {
		id := fmt.Sprintf("a%02d", i)
		anon[id] = fmt.Sprintf("agent%d", i+1)
		delay[id] = time.Duration(i) * sc.stagger
		cfg.Agents = append(cfg.Agents, configs.Agent{ID: id, Backend: configs.Backend{Type: "chatcompletion", Model: id, BaseURL: srv.BaseURL("chatcompletion")}})
	}
	o := Options{Config: cfg, Task: "bench", RunDir: tb.TempDir(), LookupEnv: func(string) (string, bool) { return "", false }}
	start := time.Now()
	res, err := runTuned(context.Background(), o, func(r *run) { r.restartGrace = sc.grace })
	wall := time.Since(start)
	if err != nil {
		tb.Fatal(err)
	}
	if res.EndedEarly != "" || len(res.Votes) != sc.agents {
		tb.Fatalf("coordination did not end with every vote: %q, %d votes", res.EndedEarly, len(res.Votes))
	}
	return figures{requests: srv.Count(), chars: srv.Chars(), wall: wall}, res
}

func benchScenario(b *testing.B, sc scenario) {
	var total figures
	for b.Loop() {
		f, _ := coordinate(b, sc)
		total.requests += f.requests
		total.chars += f.chars
	}
	b.ReportMetric(float64(total.requests)/float64(b.N), "requests/op")
	b.ReportMetric(float64(total.chars)/float64(b.N), "chars/op")
}

// BenchmarkCoordination measures what a run costs in model requests, characters sent and wall
// time (ns/op) as the number of agents grows, every agent answering once then voting: on a
// zero-latency provider, with answers staggered over time (agent i's requests take i*2ms), and
// staggered with two tool-call steps of work before each answer.
func BenchmarkCoordination(b *testing.B) {
	for _, kind := range []struct {
		name    string
		stagger time.Duration
		steps   int
	}{{"zero-latency", 0, 0}, {"staggered", 2 * time.Millisecond, 0}, {"staggered-steps", 2 * time.Millisecond, 2}} {
		for _, n := range []int{2, 8, 20, 50} {
			b.Run(fmt.Sprintf("%s/agents=%d", kind.name, n), func(b *testing.B) {
				benchScenario(b, scenario{agents: n, stagger: kind.stagger, steps: kind.steps})
			})
		}
	}
}

// BenchmarkRestartGrace measures the trade-off of the restart grace: cancelling a working agent
// at once when an answer arrives, after a fixed grace, or letting the reply in flight finish
// (and its tool calls run) before restarting it; "adaptive" is the default (state.grace).
// 20 agents, requests of agent i taking i*2ms (0 to 38ms).
func BenchmarkRestartGrace(b *testing.B) {
	for _, steps := range []int{0, 2} {
		for _, grace := range []time.Duration{time.Nanosecond, 10 * time.Millisecond, 30 * time.Second, 0} {
			name := fmt.Sprintf("steps=%d/grace=%s", steps, grace)
			if grace == 0 {
				name = fmt.Sprintf("steps=%d/grace=adaptive", steps)
			}
			b.Run(name, func(b *testing.B) {
				benchScenario(b, scenario{agents: 20, stagger: 2 * time.Millisecond, steps: steps, grace: grace})
			})
		}
	}
}

// The requests a run makes grow linearly with the agents: at most 3N+10 when every agent
// answers at once, at most 5N with answers staggered over time (the figures of issue 15; the
// benchmark reports them for 2 to 50 agents).
func TestCoordinationRequestsGrowLinearly(t *testing.T) {
	for _, tt := range []struct {
		name  string
		sc    scenario
		limit int64
	}{
		{name: "zero latency", sc: scenario{agents: 20}, limit: 3*20 + 10},
		{name: "staggered", sc: scenario{agents: 20, stagger: time.Millisecond}, limit: 5 * 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := coordinate(t, tt.sc)
			if f.requests > tt.limit {
				t.Errorf("%d agents made %d model requests, more than %d", tt.sc.agents, f.requests, tt.limit)
			}
		})
	}
}

// BenchmarkPolicyNext measures the policy's cost per message as the agents grow: a new answer
// while every other agent works (every one gets a pending restart, the heaviest message), and
// a reply ending (the most frequent one).
func BenchmarkPolicyNext(b *testing.B) {
	for _, n := range []int{2, 20, 50} {
		ids, anons := make([]string, n), make([]string, n)
		for i := range n {
			ids[i], anons[i] = fmt.Sprintf("a%02d", i), fmt.Sprintf("agent%d", i+1)
		}
		s, _ := next(newState(ids, anons, rules{}, replyClock{}), begin{})
		at := time.Now()
		for _, m := range []struct {
			name string
			msg  message
		}{
			{"answer", answerPosted{agent: 0, text: "the answer", at: at}},
			{"reply-ended", replyEnded{agent: 0, at: at, completed: true}},
		} {
			b.Run(fmt.Sprintf("%s/agents=%d", m.name, n), func(b *testing.B) {
				for b.Loop() {
					next(s, m.msg)
				}
			})
		}
	}
}
