package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
)

// benchModel is the coordination benchmark's model, on the fake provider (OpenAI Chat
// Completions): each agent answers once, after steps tool-call replies of work, while its own
// anonymous id is not offered in the vote tool, and then votes for the first answer offered.
// Every agent runs the same model (as a provider's prompt cache is per model), told apart by
// the anonymous id its prompt names; delay[anon] is how long each of its requests takes (0:
// zero latency).
func benchModel(delay map[string]time.Duration, steps int) fakeprovider.Model {
	return func(r fakeprovider.Request) fakeprovider.Reply {
		me := ""
		if m := ownAnon.FindStringSubmatch(r.Text()); m != nil {
			me = m[1]
		}
		reply := fakeprovider.Reply{Delay: delay[me]}
		worked := 0
		for _, m := range r.Messages {
			if m.Role == "assistant" {
				worked++
			}
		}
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
	// workspaces gives every agent a workspace, so its requests carry the file tools.
	workspaces bool
}

// figures are what a run cost: requests, characters sent, wall time, and the tokens the fake
// provider echoed (its prefix cache telling which input tokens a provider could serve from
// cache).
type figures struct {
	requests, chars int64
	wall            time.Duration
	tokens          fakeprovider.Usage
}

// benchPrice prices the benchmark's tokens: gpt-5's catalogue entry (input, cached input and
// output per million tokens), the model Chat Completions would run.
func benchPrice(tb testing.TB) pricing.Price {
	p, ok := pricing.Default().Lookup("openai", "gpt-5")
	if !ok {
		tb.Fatal("gpt-5 is not in the price catalogue")
	}
	return p
}

// costs are what tokens cost with the cached input billed as cached, and as plain input.
func (f figures) costs(p pricing.Price) (cached, uncached float64) {
	t := pricing.Tokens{Input: f.tokens.Input, CachedInput: f.tokens.CachedInput, Output: f.tokens.Output}
	cached = p.Cost(t)
	t.CachedInput = 0
	return cached, p.Cost(t)
}

// coordinate runs one coordination of sc on the fake provider (benchModel), every agent answering once and then
// voting (max_new_answers_per_agent: 1).
func coordinate(tb testing.TB, sc scenario) (figures, *Result) {
	tb.Helper()
	delay := map[string]time.Duration{}
	srv := fakeprovider.New(benchModel(delay, sc.steps))
	srv.EchoUsage(true)
	defer srv.Close()
	base := tb.TempDir()
	cfg := &configs.Config{BaseDir: base}
	cfg.Orchestrator.SnapshotStorage = base + "/.massgen/snapshots"
	cfg.Orchestrator.AgentTemporaryWorkspace = base + "/.massgen/temp_workspaces"
	cfg.Orchestrator.MaxNewAnswersPerAgent = 1
	for i := range sc.agents {
		id := fmt.Sprintf("a%02d", i)
		delay[fmt.Sprintf("agent%d", i+1)] = time.Duration(i) * sc.stagger
		a := configs.Agent{ID: id, Backend: configs.Backend{Type: "chatcompletion", Model: "bench", BaseURL: srv.BaseURL("chatcompletion")}}
		if sc.workspaces {
			a.Backend.CWD = filepath.Join(base, ".massgen", "workspaces", id)
			if err := os.MkdirAll(a.Backend.CWD, 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		cfg.Agents = append(cfg.Agents, a)
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
	return figures{requests: srv.Count(), chars: srv.Chars(), wall: wall, tokens: srv.Echoed()}, res
}

func benchScenario(b *testing.B, sc scenario) {
	var total figures
	var usd, usdNoCache float64
	price := benchPrice(b)
	for b.Loop() {
		f, _ := coordinate(b, sc)
		total.requests += f.requests
		total.chars += f.chars
		total.tokens.Input += f.tokens.Input
		total.tokens.CachedInput += f.tokens.CachedInput
		c, u := f.costs(price)
		usd, usdNoCache = usd+c, usdNoCache+u
	}
	n := float64(b.N)
	b.ReportMetric(float64(total.requests)/n, "requests/op")
	b.ReportMetric(float64(total.chars)/n, "chars/op")
	b.ReportMetric(float64(total.tokens.Input)/n, "input-tokens/op")
	b.ReportMetric(100*float64(total.tokens.CachedInput)/float64(max(total.tokens.Input, 1)), "%cacheable")
	b.ReportMetric(usd/n, "USD/op")
	b.ReportMetric(usdNoCache/n, "USD-uncached/op")
}

// BenchmarkCoordination measures what a run costs in model requests, characters sent and wall
// time (ns/op) as the number of agents grows, every agent answering once then voting: on a
// zero-latency provider, with answers staggered over time (agent i's requests take i*2ms),
// staggered with two tool-call steps of work before each answer, and at zero latency with a
// workspace per agent (its requests carry the file tools). It also reports the input tokens,
// the share of them a provider's prefix cache could serve (%cacheable: the prefix each request
// shares with an earlier one, as the fake provider echoes it) and what the tokens cost at
// gpt-5's prices with that cache and without.
func BenchmarkCoordination(b *testing.B) {
	for _, kind := range []struct {
		name       string
		stagger    time.Duration
		steps      int
		workspaces bool
	}{{"zero-latency", 0, 0, false}, {"staggered", 2 * time.Millisecond, 0, false}, {"staggered-steps", 2 * time.Millisecond, 2, false},
		{"workspaces", 0, 0, true}} {
		for _, n := range []int{2, 8, 20, 50} {
			b.Run(fmt.Sprintf("%s/agents=%d", kind.name, n), func(b *testing.B) {
				benchScenario(b, scenario{agents: n, stagger: kind.stagger, steps: kind.steps, workspaces: kind.workspaces})
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
