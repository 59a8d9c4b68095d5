package orchestrator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen/backends"
)

// sentVote is what a vote request offered and what existed when it was sent.
type sentVote struct {
	offered  []string // the vote tool's enum
	existing []string // anonymous ids with an answer when the request was sent
	seq      int      // the state's answerSeq then
}

// The protocol's invariants hold whatever the timing, the restart grace and the agents' choices:
// every counted vote chose among exactly the answers that existed when its request was sent, and
// after no other answer; the winner has the most votes among the current answers. Agents here
// work a few steps, answer (up to twice) or vote for a random answer, with random latencies.
func TestCoordinationInvariants(t *testing.T) {
	graces := []time.Duration{time.Nanosecond, 500 * time.Microsecond, time.Hour}
	for n := range 24 {
		grace := graces[n%len(graces)]
		t.Run(fmt.Sprintf("run=%d/grace=%s", n, grace), func(t *testing.T) {
			ids := []string{"a", "b", "c", "d", "e", "f"}
			h := newHarness(t, ids...)
			h.grace = grace
			h.cfg.Orchestrator.MaxNewAnswersPerAgent = 2
			var r *run
			var smu sync.Mutex
			var now state // the coordination state as the owner last left it
			h.onRun = func(rr *run) {
				r = rr
				r.observe = func(s state) {
					smu.Lock()
					now = s
					smu.Unlock()
				}
			}
			var mu sync.Mutex
			sent := map[string]sentVote{} // vote reason (unique) -> what its request saw
			for i, id := range ids {
				rng := rand.New(rand.NewPCG(uint64(n), uint64(i)))
				var rmu sync.Mutex // one goroutine per agent, but -race wants it said
				h.scripts[id] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
					smu.Lock()
					existing, seq := now.answerAnons(), now.answerSeq
					smu.Unlock()
					rmu.Lock()
					delay := time.Duration(rng.IntN(1500)) * time.Microsecond
					roll := rng.IntN(100)
					rmu.Unlock()
					select {
					case <-time.After(delay): // the provider's latency
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					me, offered := c.req.Vars["AGENT_ANON"], c.answers()
					maxed := slices.ContainsFunc(c.req.Messages, func(m backends.Message) bool {
						return m.Role == "user" && strings.Contains(m.Content, "maximum number of new answers")
					})
					switch {
					case c.final():
						return textResp("final"), nil
					case roll < 30 && c.lastMessage().Role != "tool":
						return &backends.Response{ToolCalls: []backends.ToolCall{call("w", "list_directory", map[string]string{"path": "."})}}, nil
					case !maxed && (!slices.Contains(offered, me) || roll < 45):
						return answerResp(fmt.Sprintf("answer of %s, request %d", me, c.n)), nil
					}
					reason := fmt.Sprintf("%s/%d", id, c.n)
					mu.Lock()
					sent[reason] = sentVote{offered: offered, existing: existing, seq: seq}
					mu.Unlock()
					return voteResp(offered[rng.IntN(len(offered))], reason), nil
				}
			}
			res, err := h.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.EndedEarly != "" || len(res.Votes) != len(ids) {
				t.Fatalf("ended early (%q) with votes %v", res.EndedEarly, res.Votes)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, ev := range h.ev.of(EventVote, "") {
				s, ok := sent[ev.Text]
				if !ok {
					t.Fatalf("vote %q has no recorded request", ev.Text)
				}
				if !slices.Equal(s.offered, s.existing) {
					t.Errorf("vote %s offered %v; answers when its request was sent: %v", ev.Text, s.offered, s.existing)
				}
			}
			// The votes that decided were all made after the last answer.
			final := r.coord.answerAnons()
			for _, a := range r.coord.agents {
				if a.vote == nil {
					continue
				}
				s := sent[a.vote.reason]
				if s.seq != r.coord.answerSeq || !slices.Equal(s.offered, final) {
					t.Errorf("counted vote %q was asked at answer %d with %v; last answer %d, answers %v", a.vote.reason, s.seq, s.offered, r.coord.answerSeq, final)
				}
			}
			count := map[string]int{}
			for _, target := range res.Votes {
				count[target]++
			}
			for id, n := range count {
				if n > count[res.Winner] {
					t.Errorf("winner %s has %d votes, %s has %d", res.Winner, count[res.Winner], id, n)
				}
			}
			if res.Answers[res.Winner] == "" {
				t.Errorf("winner %s has no current answer", res.Winner)
			}
			// The event stream keeps the order of the commits: a vote never comes before an
			// answer of the agent it votes for (displays, the timeline and --output json read it).
			h.ev.mu.Lock()
			answeredSoFar := map[string]bool{}
			for _, ev := range h.ev.all {
				switch ev.Kind {
				case EventAnswer:
					answeredSoFar[ev.Agent] = true
				case EventVote:
					if !answeredSoFar[ev.Target] {
						t.Errorf("vote %q for %s reached the event stream before any answer of %s", ev.Text, ev.Target, ev.Target)
					}
				}
			}
			h.ev.mu.Unlock()
		})
	}
}

// An agent that answered or voted is not woken for each new answer while others work: it runs
// once when the field is quiet. Here alice answers at once, then bob, carol and dave answer one
// after the other, each reply finishing after the previous answer (so their restarts, pending,
// fold into the reply in flight): every agent sends exactly one answer and one vote request.
func TestIdleAgentsVoteOncePerQuietPeriod(t *testing.T) {
	ids := []string{"alice", "bob", "carol", "dave"}
	h := newHarness(t, ids...)
	h.grace = time.Hour // no reply is cancelled
	answered := map[string]chan struct{}{}
	for _, id := range ids {
		answered[id] = make(chan struct{})
	}
	h.ev.on = func(ev Event) {
		if ev.Kind == EventAnswer {
			close(answered[ev.Agent])
		}
	}
	for i, id := range ids {
		h.scripts[id] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
			me := c.req.Vars["AGENT_ANON"]
			switch {
			case c.final():
				return textResp("final"), nil
			case slices.Contains(c.answers(), me):
				return voteResp("agent1", "first"), nil
			}
			if i > 0 {
				select { // answer after the previous agent did
				case <-answered[ids[i-1]]:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return answerResp("answer of " + me), nil
		}
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Votes) != 4 || res.Winner != "alice" {
		t.Fatalf("result %+v", res)
	}
	for _, id := range ids {
		var coordination int
		for _, req := range h.rec.get(id) {
			if req.Phase == PhaseCoordination {
				coordination++
			}
		}
		if coordination != 2 {
			t.Errorf("%s sent %d coordination requests, want 2 (answer, vote)", id, coordination)
		}
		if n := len(h.ev.of(EventVote, id)); n != 1 {
			t.Errorf("%s voted %d times, want 1", id, n)
		}
	}
}

// Answers arriving while an agent's restart is pending fold into one restart, at its next step:
// bob's reply finishes after alice's and carol's answers; it restarts once and sees both.
func TestPendingRestartsFold(t *testing.T) {
	h := newHarness(t, "alice", "bob", "carol")
	h.grace = time.Hour // no reply is cancelled
	answered := map[string]chan struct{}{"alice": make(chan struct{}), "carol": make(chan struct{})}
	bobWorking := make(chan struct{})
	h.ev.on = func(ev Event) {
		if ev.Kind == EventAnswer {
			close(answered[ev.Agent])
		}
	}
	wait := func(ctx context.Context, ch chan struct{}) error {
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, id := range []string{"alice", "carol"} {
		h.scripts[id] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
			switch {
			case c.final():
				return textResp("final"), nil
			case slices.Contains(c.answers(), c.req.Vars["AGENT_ANON"]):
				return voteResp("agent1", "first"), nil
			case id == "alice":
				if err := wait(ctx, bobWorking); err != nil {
					return nil, err
				}
			case id == "carol":
				if err := wait(ctx, answered["alice"]); err != nil { // carol answers second
					return nil, err
				}
			}
			return answerResp("answer of " + id), nil
		}
	}
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		if c.n == 0 { // still working when both answers arrive; its reply ends with a step
			close(bobWorking)
			if err := wait(ctx, answered["carol"]); err != nil {
				return nil, err
			}
			return &backends.Response{ToolCalls: []backends.ToolCall{call("s", "list_directory", map[string]string{"path": "."})}}, nil
		}
		if got := c.answers(); !slices.Equal(got, []string{"agent1", "agent3"}) {
			t.Errorf("bob restarted seeing answers %v, want agent1 and agent3", got)
		}
		return voteResp("agent1", "first"), nil
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Votes) != 3 || res.EndedEarly != "" {
		t.Fatalf("result %+v", res)
	}
	if n := restarts(h.ev.of(EventRestart, "bob")); n != 1 {
		t.Errorf("bob was restarted %d times, want 1", n)
	}
	if n := len(h.ev.of(EventStart, "bob")); n != 2 {
		t.Errorf("bob ran %d executions, want 2", n)
	}
}

// restarts counts the restart events of working agents (not those of idle ones told to vote again).
func restarts(evs []Event) int {
	n := 0
	for _, ev := range evs {
		if ev.Status == StatusRestarting {
			n++
		}
	}
	return n
}

// A restarted agent's partial work is saved as its snapshot, its workspace cleared, and it sees
// that work in its own folder of the temp workspace, which its prompt names: whether it restarts
// at its next step or is cancelled when the grace runs out.
func TestRestartedAgentSeesItsPartialWork(t *testing.T) {
	for _, tt := range []struct {
		name  string
		grace time.Duration
	}{
		{name: "at its next step", grace: time.Hour},
		{name: "cancelled after the grace", grace: time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fh := newFileHarness(t, "alice", "bob")
			fh.grace = tt.grace
			wsB := fh.ws["bob"]
			bobWrote := make(chan struct{})
			aliceAnswered := make(chan struct{})
			fh.ev.on = func(ev Event) {
				if ev.Kind == EventAnswer && ev.Agent == "alice" {
					close(aliceAnswered)
				}
			}
			fh.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
				switch {
				case c.final():
					return textResp("final"), nil
				case len(c.answers()) == 0:
					select {
					case <-bobWrote:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return answerResp("alice's answer"), nil
				}
				return voteResp("agent1", "mine"), nil
			}
			var ownFolder string
			fh.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
				switch {
				case len(c.answers()) == 0 && c.n == 0:
					return &backends.Response{ToolCalls: []backends.ToolCall{writeCall("p", filepath.Join(wsB, "draft.txt"), "bob's partial draft")}}, nil
				case len(c.answers()) == 0 && tt.grace == time.Hour:
					close(bobWrote) // the reply in flight ends after the answer, with a step
					<-aliceAnswered
					return &backends.Response{ToolCalls: []backends.ToolCall{writeCall("q", filepath.Join(wsB, "more.txt"), "more")}}, nil
				case len(c.answers()) == 0:
					close(bobWrote)
					return block(ctx) // cancelled when the grace runs out
				case c.lastMessage().Role == "user":
					ownFolder = filepath.Join(c.req.Vars["TEMP_WORKSPACE"], c.req.Vars["AGENT_ANON"])
					if !strings.Contains(c.lastMessage().Content, "Yours is "+ownFolder) {
						t.Errorf("the prompt does not name bob's own folder %s:\n%s", ownFolder, c.lastMessage().Content)
					}
					return &backends.Response{ToolCalls: []backends.ToolCall{call("r", "read_file", map[string]string{"path": filepath.Join(ownFolder, "draft.txt")})}}, nil
				}
				return voteResp("agent1", "fine"), nil
			}
			res, err := fh.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Votes) != 2 {
				t.Fatalf("result %+v", res)
			}
			if m, ok := toolResult(fh.rec.get("bob"), "r"); !ok || m.IsError || !strings.Contains(m.Content, "bob's partial draft") {
				t.Errorf("bob's read of its own partial work = %+v", m)
			}
			if got := readFile(t, filepath.Join(fh.snapRoot, "bob", "draft.txt")); got != "bob's partial draft" {
				t.Errorf("bob's snapshot draft.txt = %q", got)
			}
			if tt.grace == time.Hour && readFile(t, filepath.Join(fh.snapRoot, "bob", "more.txt")) != "more" {
				t.Error("the tool call of the reply in flight is not in bob's partial work")
			}
			if exists(filepath.Join(wsB, "draft.txt")) {
				t.Error("bob's workspace was not cleared on restart")
			}
			if ownFolder != filepath.Join(fh.tempRoot, "bob", "agent2") {
				t.Errorf("bob's own folder = %q", ownFolder)
			}
			if n := restarts(fh.ev.of(EventRestart, "bob")); n != 1 {
				t.Errorf("bob was restarted %d times, want 1", n)
			}
		})
	}
}

// A pending restart waits for the reply in flight until it is due to end, judged from how long
// the agent's (or, without any, every agent's) replies take, within the bounds.
func TestGraceWaitsForTheReplyInFlight(t *testing.T) {
	now := time.Now()
	const a, b = 0, 1
	tests := []struct {
		name    string
		start   time.Time        // a's reply in flight (zero: none)
		typical [2]time.Duration // a's and b's usual replies (0: none yet)
		all     time.Duration
		fixed   time.Duration
		want    time.Duration
	}{
		{name: "no reply in flight (tools running)", want: minRestartGrace},
		{name: "reply due in 6s", start: now.Add(-4 * time.Second), typical: [2]time.Duration{a: 10 * time.Second}, want: 6 * time.Second},
		{name: "reply overdue", start: now.Add(-20 * time.Second), typical: [2]time.Duration{a: 10 * time.Second}, want: minRestartGrace},
		{name: "very long replies", start: now, typical: [2]time.Duration{a: 5 * time.Minute}, want: maxRestartGrace},
		{name: "no history of its own: every agent's", start: now.Add(-2 * time.Second),
			typical: [2]time.Duration{b: time.Hour}, all: 12 * time.Second, want: 10 * time.Second},
		{name: "fixed grace (tests)", start: now, fixed: time.Millisecond, want: time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := state{rules: rules{grace: tt.fixed}, clock: replyClock{start: []time.Time{tt.start, {}}, typical: tt.typical[:], all: tt.all}}
			if got := s.grace(a, now); got != tt.want {
				t.Errorf("grace = %s, want %s", got, tt.want)
			}
		})
	}
}

// With the run's own estimate, a reply that has run past the agent's usual reply time is
// cancelled and the agent restarted; the clock learnt from the replies that completed.
func TestOverdueReplyIsCancelled(t *testing.T) {
	h := newHarness(t, "alice", "bob")
	h.grace = -1
	bobWaiting := make(chan struct{})
	var r *run
	h.onRun = func(rr *run) { r = rr }
	h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.final():
			return textResp("final"), nil
		case len(c.answers()) == 0:
			select {
			case <-bobWaiting:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return answerResp("alice's answer"), nil
		}
		return voteResp("agent1", "mine"), nil
	}
	h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
		switch {
		case c.n == 0:
			return &backends.Response{ToolCalls: []backends.ToolCall{call("s", "list_directory", map[string]string{"path": "."})}}, nil
		case len(c.answers()) == 0:
			close(bobWaiting)
			return block(ctx) // far slower than its first reply
		}
		return voteResp("agent1", "fine"), nil
	}
	res, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Votes) != 2 || restarts(h.ev.of(EventRestart, "bob")) != 1 || len(h.ev.of(EventStart, "bob")) != 2 {
		t.Fatalf("result %+v, bob's events %v", res, h.ev.of(EventRestart, "bob"))
	}
	if r.clock.typical[1] <= 0 || r.clock.all <= 0 || !r.clock.start[0].IsZero() || !r.clock.start[1].IsZero() {
		t.Errorf("clock = %+v", r.clock)
	}
}
