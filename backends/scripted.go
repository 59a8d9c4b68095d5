package backends

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen/configs"
	"go.uber.org/zap"
)

// scriptPollInterval is how often a wait_for step checks for its file.
const scriptPollInterval = 25 * time.Millisecond

// scripted is the deterministic demo and test backend: it replays the steps written in the
// config instead of calling a model. It is never presented as a model.
type scripted struct {
	steps  []configs.ScriptStep
	logger *zap.Logger
	agent  string

	mu sync.Mutex
	// cursor is, per phase, the index of the next step to consider; it survives restarts
	// because the orchestrator keeps one Backend per agent for the whole run.
	cursor map[string]int
	// seen is, per phase, what the agent was shown when it last played a step (see situation);
	// a block step whose call shows something else comes after a restart it need not wait for.
	seen map[string]string
	// calls numbers the tool calls for deterministic IDs.
	calls int
}

func newScripted(cfg configs.Backend, o Options) (Backend, error) {
	for i, s := range cfg.Script {
		for j, tc := range s.ToolCalls {
			if tc.Name == "" {
				return nil, fmt.Errorf("scripted backend: script step %d: tool call %d has no name", i+1, j+1)
			}
		}
	}
	logger := o.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	return &scripted{steps: cfg.Script, logger: logger, agent: o.AgentID, cursor: map[string]int{}, seen: map[string]string{}}, nil
}

func (s *scripted) Provider() string { return "scripted" }
func (s *scripted) Model() string    { return "scripted (demo)" }

// Generate plays the next step of req.Phase.
func (s *scripted) Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	step, idx, ok := s.next(req.Phase)
	for ok && step.Block {
		// A slow model: nothing until the restart cancels the call. The step counts as played
		// even if ctx was already cancelled, so a restarted agent goes on with the next one.
		restarted := s.restartedSince(req)
		s.advance(req, idx, !restarted)
		if !restarted {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		// The restart this step waits for came before the step started (the execution was
		// cancelled before it reached the model): waiting now would wait for a second one,
		// which may never come.
		s.logger.Debug("scripted block step skipped: the agent was restarted before it", zap.String("agent", s.agent), zap.Int("step", idx+1))
		step, idx, ok = s.next(req.Phase)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !ok {
		return s.finished(req, onEvent), nil
	}
	s.logger.Debug("scripted step", zap.String("agent", s.agent), zap.String("phase", req.Phase), zap.Int("step", idx+1))

	if step.WaitFor != "" {
		path := substitute(step.WaitFor, req.Vars)
		if !filepath.IsAbs(path) && req.Vars["WORKSPACE"] != "" {
			path = filepath.Join(req.Vars["WORKSPACE"], path)
		}
		// Cancelled while waiting: the step has not replied, so it is played again next time.
		if err := waitForPath(ctx, path); err != nil {
			return nil, err
		}
	}
	s.advance(req, idx, endsExecution(step))

	resp := &Response{Text: substitute(step.Text, req.Vars)}
	for _, tc := range step.ToolCalls {
		args, err := json.Marshal(substituteAny(nonNilArgs(tc.Args), req.Vars))
		if err != nil {
			return nil, fmt.Errorf("scripted backend: step %d: tool call %s: %w", idx+1, tc.Name, err)
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: s.callID(), Name: tc.Name, Arguments: args})
	}
	emit(onEvent, resp)
	return resp, nil
}

// next finds the next step for phase without consuming it.
func (s *scripted) next(phase string) (configs.ScriptStep, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := s.cursor[phase]; i < len(s.steps); i++ {
		if p := s.steps[i].Phase; p == "" || phase == "" || string(p) == phase {
			return s.steps[i], i, true
		}
	}
	return configs.ScriptStep{}, 0, false
}

// advance marks step idx of req.Phase as played. ended says the step ends the agent's execution
// (a workflow call, or a block ended by the restart): the next call starts a new execution, so
// nothing can be told from what it shows. Otherwise the next call belongs to the same execution
// unless a restart came in between, which the changed situation shows.
func (s *scripted) advance(req Request, idx int, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cursor[req.Phase] = idx + 1
	if ended {
		s.seen[req.Phase] = ""
	} else {
		s.seen[req.Phase] = situation(req)
	}
}

// restartedSince reports whether the agent was restarted after its previous step of the phase,
// before this call: req shows it another situation than the one that step was played in. Before
// any step, the agent was shown no answers. Only coordination has restarts.
func (s *scripted) restartedSince(req Request) bool {
	if req.Phase != "coordination" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, ok := s.seen[req.Phase]
	switch {
	case !ok:
		return req.Vars["ANSWERS"] != ""
	case seen == "":
		return false
	}
	return situation(req) != seen
}

// situation is what an execution is started with: the answers that exist and the messages up to
// the model's first turn (the task and the answers as shown to the agent). It stays the same for
// every call of one execution and changes when a restart brings new answers.
func situation(req Request) string {
	h := sha256.New()
	fmt.Fprintf(h, "%q\n", req.Vars["ANSWERS"])
	for _, m := range req.Messages {
		if m.Role != "user" && m.Role != "system" {
			break
		}
		fmt.Fprintf(h, "%s %q\n", m.Role, m.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s *scripted) callID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return fmt.Sprintf("call_%d", s.calls)
}

// finished is the reply once the script is exhausted: in coordination, a vote for the first
// answer listed in Vars["ANSWERS"]; otherwise a fixed text.
func (s *scripted) finished(req Request, onEvent func(Event)) *Response {
	resp := &Response{Text: "(script finished)"}
	if req.Phase == "coordination" {
		ids := strings.Split(req.Vars["ANSWERS"], ",")
		if id := strings.TrimSpace(ids[0]); id != "" && offersTool(req.Tools, "vote") {
			args, _ := json.Marshal(map[string]string{"agent_id": id, "reason": "scripted backend: script finished"})
			resp = &Response{ToolCalls: []ToolCall{{ID: s.callID(), Name: "vote", Arguments: args}}}
		}
	}
	emit(onEvent, resp)
	return resp
}

// endsExecution reports whether a step's reply ends a coordination execution (a workflow call).
func endsExecution(step configs.ScriptStep) bool {
	for _, tc := range step.ToolCalls {
		if tc.Name == "new_answer" || tc.Name == "vote" {
			return true
		}
	}
	return false
}

func offersTool(tools []ToolSpec, name string) bool {
	if len(tools) == 0 {
		return true // the caller did not say: assume the workflow tools are there
	}
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func emit(onEvent func(Event), resp *Response) {
	if onEvent == nil {
		return
	}
	if resp.Text != "" {
		onEvent(Event{Kind: EventTextDelta, Text: resp.Text})
	}
	for i := range resp.ToolCalls {
		tc := resp.ToolCalls[i]
		onEvent(Event{Kind: EventToolCall, ToolCall: &tc})
	}
}

// waitForPath polls until path exists or ctx ends.
func waitForPath(ctx context.Context, path string) error {
	t := time.NewTicker(scriptPollInterval)
	defer t.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("scripted backend: wait_for %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// substitute replaces ${NAME} with vars[NAME]; unknown names are left as they are so a
// mistake shows in the output instead of silently becoming "".
func substitute(s string, vars map[string]string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := vars[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// substituteAny applies substitute to every string inside a decoded YAML/JSON value.
func substituteAny(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		return substitute(x, vars)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substituteAny(e, vars)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = substituteAny(e, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substituteAny(e, vars)
		}
		return out
	}
	return v
}

func nonNilArgs(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
