package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/pubsub"
)

// fakeCall is what a test backend's script sees on each Generate.
type fakeCall struct {
	req     backends.Request
	n       int // calls so far for this agent (0-based)
	onEvent func(backends.Event)
}

// answers are the anonymous ids with an answer, as offered in the vote enum.
func (c fakeCall) answers() []string {
	if c.req.Vars["ANSWERS"] == "" {
		return nil
	}
	return strings.Split(c.req.Vars["ANSWERS"], ",")
}

func (c fakeCall) final() bool { return c.req.Phase == PhaseFinal }

// lastTool is the content of the last tool result sent back, if any.
func (c fakeCall) lastMessage() backends.Message {
	return c.req.Messages[len(c.req.Messages)-1]
}

type script func(ctx context.Context, c fakeCall) (*backends.Response, error)

// fakeBackend implements backends.Backend for coordination tests: it is our code standing in
// for a model, recording every request it gets.
type fakeBackend struct {
	id  string
	fn  script
	rec *recorder
	mu  sync.Mutex
	n   int
}

func (f *fakeBackend) Generate(ctx context.Context, req backends.Request, onEvent func(backends.Event)) (*backends.Response, error) {
	f.mu.Lock()
	n := f.n
	f.n++
	f.mu.Unlock()
	f.rec.add(f.id, req)
	if onEvent == nil {
		onEvent = func(backends.Event) {}
	}
	resp, err := f.fn(ctx, fakeCall{req: req, n: n, onEvent: onEvent})
	if resp != nil && resp.Usage == (backends.Usage{}) {
		resp.Usage = backends.Usage{InputTokens: 10, OutputTokens: 2}
	}
	return resp, err
}
func (f *fakeBackend) Provider() string { return "fake" }
func (f *fakeBackend) Model() string    { return "fake-" + f.id }

type recorder struct {
	mu   sync.Mutex
	reqs map[string][]backends.Request
}

func (r *recorder) add(id string, req backends.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reqs == nil {
		r.reqs = map[string][]backends.Request{}
	}
	// Copy the slices: the orchestrator keeps appending to its own.
	req.Messages = append([]backends.Message(nil), req.Messages...)
	r.reqs[id] = append(r.reqs[id], req)
}

func (r *recorder) get(id string) []backends.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]backends.Request(nil), r.reqs[id]...)
}

// events collects the event stream: stream returns a broker whose events it collects, in
// order, calling on (when set) for each from its subscriber goroutine.
type events struct {
	mu  sync.Mutex
	all []Event
	on  func(Event)
	wg  sync.WaitGroup
}

func (e *events) stream() *pubsub.Broker[Event] {
	b := pubsub.New[Event]()
	ch := b.Subscribe(context.Background())
	e.wg.Go(func() {
		for ev := range ch {
			e.add(ev)
		}
	})
	return b
}

// finish closes b and waits until every event published on it is collected.
func (e *events) finish(b *pubsub.Broker[Event]) {
	b.Close()
	e.wg.Wait()
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	on := e.on
	e.mu.Unlock()
	if on != nil {
		on(ev)
	}
}

func (e *events) of(kind EventKind, agent string) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.all {
		if ev.Kind == kind && (agent == "" || ev.Agent == agent) {
			out = append(out, ev)
		}
	}
	return out
}

// Responses.
func call(id, name string, args any) backends.ToolCall {
	b, _ := json.Marshal(args)
	return backends.ToolCall{ID: id, Name: name, Arguments: b}
}
func answerResp(text string) *backends.Response {
	return &backends.Response{ToolCalls: []backends.ToolCall{call("a1", ToolNewAnswer, map[string]string{"content": text})}}
}
func voteResp(target, reason string) *backends.Response {
	return &backends.Response{ToolCalls: []backends.ToolCall{call("v1", ToolVote, map[string]string{"agent_id": target, "reason": reason})}}
}
func textResp(text string) *backends.Response { return &backends.Response{Text: text} }

// block waits for cancellation, as a slow model being restarted.
func block(ctx context.Context) (*backends.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// harness builds a config with agents (no workspaces unless dirs are given) and runs it.
type harness struct {
	t       *testing.T
	cfg     *configs.Config
	scripts map[string]script
	rec     *recorder
	ev      *events
	grace   time.Duration // the restart grace (0: testGrace; negative: the run's own estimate)
	onRun   func(*run)    // called with the run before it starts
}

func newHarness(t *testing.T, ids ...string) *harness {
	t.Helper()
	base := t.TempDir()
	cfg := &configs.Config{BaseDir: base}
	cfg.Orchestrator.SnapshotStorage = base + "/.massgen/snapshots"
	cfg.Orchestrator.AgentTemporaryWorkspace = base + "/.massgen/temp_workspaces"
	for _, id := range ids {
		cfg.Agents = append(cfg.Agents, configs.Agent{ID: id, Backend: configs.Backend{Type: "fake"}})
	}
	return &harness{t: t, cfg: cfg, scripts: map[string]script{}, rec: &recorder{}, ev: &events{}}
}

func (h *harness) options(ctx context.Context) Options {
	return Options{
		Config: h.cfg,
		Task:   "write a greeting",
		RunDir: h.t.TempDir(),
		NewBackend: func(a configs.Agent) (backends.Backend, error) {
			fn := h.scripts[a.ID]
			if fn == nil {
				return nil, fmt.Errorf("no script for %s", a.ID)
			}
			return &fakeBackend{id: a.ID, fn: fn, rec: h.rec}, nil
		},
		Events: h.ev.stream(),
	}
}

// testGrace is the restart grace in tests: a blocked model (block) stands for one slower than
// the grace, cancelled when it runs out.
const testGrace = time.Millisecond

func (h *harness) run(ctx context.Context) (*Result, error) {
	return h.runOptions(ctx, h.options(ctx))
}

// testTimeout bounds a test run: one that takes longer hangs, and fails with the agents' states
// and the events instead of stalling until go test's timeout.
const testTimeout = 60 * time.Second

// runOptions runs o with the test restart grace, or h.grace when set.
func (h *harness) runOptions(ctx context.Context, o Options) (*Result, error) {
	h.t.Helper()
	var r *run
	ctx, cancel := context.WithTimeoutCause(ctx, testTimeout, errHung)
	defer cancel()
	res, err := runTuned(ctx, o, func(rr *run) {
		r = rr
		r.restartGrace = testGrace
		switch {
		case h.grace > 0:
			r.restartGrace = h.grace
		case h.grace < 0: // the run's own estimate
			r.restartGrace = 0
		}
		if h.onRun != nil {
			h.onRun(r)
		}
	})
	if o.Events != nil { // every event of the run is collected before the test looks
		h.ev.finish(o.Events)
	}
	if errors.Is(context.Cause(ctx), errHung) {
		for _, a := range r.coord.agents { // the coordination's state when it ended
			h.t.Logf("%s: status %s, needsRun %v, deferred %v, executing %v, pending %v, seenSeq %d (answerSeq %d)",
				a.id, a.status, a.needsRun, a.deferred, a.executing, a.pending, a.seenSeq, r.coord.answerSeq)
		}
		h.ev.mu.Lock()
		for _, ev := range h.ev.all {
			h.t.Logf("%s %s %s %s %.100s", ev.Time.Format("05.000000"), ev.Kind, ev.Agent, ev.Status, ev.Text)
		}
		h.ev.mu.Unlock()
		h.t.Fatalf("the run hung for %s", testTimeout)
	}
	return res, err
}

var errHung = errors.New("the test run hung")
