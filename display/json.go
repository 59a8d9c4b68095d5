package display

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/orchestrator"
)

// JSON is the display of --output json: every event of the run as one JSON object per line
// (JSON Lines) on stdout, each with a "type", and after each turn the files it changed and one
// object of type "result". It only reads the event stream; human progress stays on stderr.
// docs/output.md documents the format.
type JSON struct {
	mu      sync.Mutex
	w       io.Writer
	err     error // the first write error: the rest is dropped
	results int
}

// NewJSON returns the JSON Lines display writing to w.
func NewJSON(w io.Writer) *JSON { return &JSON{w: w} }

// JSONEvent is one line of the stream. Fields not set for a type are left out.
type JSONEvent struct {
	Type  string    `json:"type"`
	Time  time.Time `json:"time"`
	Agent string    `json:"agent,omitempty"`
	Anon  string    `json:"anon,omitempty"`
	Phase string    `json:"phase,omitempty"`
	// tool_call: the tool, its arguments (an object, or a string when they were cut), and the
	// permission decision: "allowed" or "denied"; Error is a failed call, Message says why.
	Tool     string          `json:"tool,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	Decision string          `json:"decision,omitempty"`
	Error    *bool           `json:"error,omitempty"`
	Message  string          `json:"message,omitempty"`
	// answer, final_answer: the text; vote: Target and the reason in Text; winner: the agent.
	Text   string `json:"text,omitempty"`
	Target string `json:"target,omitempty"`
	// tokens: cumulative for the agent, by kind (cached and cache write are part of input,
	// reasoning part of output), with the agent's cost and the turn's so far (null: unknown).
	InputTokens       *int64          `json:"input_tokens,omitempty"`
	OutputTokens      *int64          `json:"output_tokens,omitempty"`
	CachedInputTokens *int64          `json:"cached_input_tokens,omitempty"`
	CacheWriteTokens  *int64          `json:"cache_write_tokens,omitempty"`
	ReasoningTokens   *int64          `json:"reasoning_tokens,omitempty"`
	CostUSD           json.RawMessage `json:"cost_usd,omitempty"`
	TotalCostUSD      json.RawMessage `json:"total_cost_usd,omitempty"`
	// run_start: the agents (real id -> anonymous id).
	Agents map[string]string `json:"agents,omitempty"`
}

// jsonFilesChanged is the files_changed line: files is there also when nothing changed ([]).
type jsonFilesChanged struct {
	Type  string         `json:"type"`
	Time  time.Time      `json:"time"`
	Files []changes.File `json:"files"`
}

// JSONResult is the last line of a turn.
type JSONResult struct {
	Type         string            `json:"type"` // "result"
	FinalAnswer  string            `json:"final_answer"`
	Winner       string            `json:"winner"`
	Votes        map[string]string `json:"votes"`
	FilesChanged []changes.File    `json:"files_changed"`
	// DeniedByUser are the calls the user refused at the permission prompt.
	DeniedByUser []string `json:"denied_by_user"`
	// DeniedChanges counts the final agent's changes to files that the permission layer
	// refused (rules, hooks; not the user): the turn is then partial (exit 4).
	DeniedChanges int    `json:"denied_changes"`
	Session       string `json:"session,omitempty"`
	Turn          int    `json:"turn,omitempty"`
	// Tokens are every agent's tokens by kind and cost; CostUSD the turn's cost (null when a
	// model has no price). StoppedBy says who ended coordination early: "user" (Ctrl-C),
	// "budget", "timeout".
	Tokens    map[string]JSONTokens `json:"tokens,omitempty"`
	CostUSD   json.RawMessage       `json:"cost_usd,omitempty"`
	StoppedBy string                `json:"stopped_by,omitempty"`
	// Timeout is the overall timeout when it ended coordination (stopped_by "timeout").
	Timeout  *JSONTimeout `json:"timeout,omitempty"`
	ExitCode int          `json:"exit_code"`
	Error    string       `json:"error,omitempty"`
}

// JSONTimeout is a timeout that ended the turn: the config key that sets it ("default" when
// none does) and its value.
type JSONTimeout struct {
	Key     string  `json:"key"`
	Seconds float64 `json:"seconds"`
}

// JSONTokens is one agent's tokens by kind and their cost (null: its model has no price).
type JSONTokens struct {
	Input       int64           `json:"input_tokens"`
	CachedInput int64           `json:"cached_input_tokens"`
	CacheWrite  int64           `json:"cache_write_tokens"`
	Output      int64           `json:"output_tokens"`
	Reasoning   int64           `json:"reasoning_tokens"`
	CostUSD     json.RawMessage `json:"cost_usd"`
}

// JSONSpend fills r's tokens, cost and stopped_by from a (possibly partial) result.
func JSONSpend(r *JSONResult, res *orchestrator.Result) {
	if res == nil {
		return
	}
	r.StoppedBy = res.StoppedBy
	if len(res.Usage) == 0 {
		return
	}
	r.Tokens = map[string]JSONTokens{}
	for id, u := range res.Usage {
		r.Tokens[id] = JSONTokens{Input: u.InputTokens, CachedInput: u.CachedInputTokens, CacheWrite: u.CacheWriteTokens,
			Output: u.OutputTokens, Reasoning: u.ReasoningTokens, CostUSD: CostJSON(res.Cost[id])}
	}
	r.CostUSD = CostJSON(res.TotalCost)
}

// Handle writes the line of an event (events of no interest to scripts write nothing).
func (j *JSON) Handle(ev orchestrator.Event) {
	if line, ok := jsonEvent(ev); ok {
		j.Emit(line)
	}
}

// Emit writes one object as a line.
func (j *JSON) Emit(v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // answers and files are often HTML: keep them readable
	if err := enc.Encode(v); err != nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	// JSON escapes for what encoding/json writes raw (C1 controls, bidi and other format
	// characters): the same value, and nothing that drives a terminal that shows the stream.
	_, j.err = j.w.Write(termtext.JSON(buf.Bytes()))
}

// FilesChanged writes the files_changed line of a turn (also when nothing changed).
func (j *JSON) FilesChanged(cs *changes.ChangeSet) {
	j.Emit(jsonFilesChanged{Type: "files_changed", Time: time.Now(), Files: cs.FilesChanged()})
}

// Results is the number of result lines written.
func (j *JSON) Results() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.results
}

// Result writes the result line of a turn.
func (j *JSON) Result(r JSONResult) {
	j.mu.Lock()
	j.results++
	j.mu.Unlock()
	r.Type = "result"
	if r.Votes == nil {
		r.Votes = map[string]string{}
	}
	if r.FilesChanged == nil {
		r.FilesChanged = []changes.File{}
	}
	if r.DeniedByUser == nil {
		r.DeniedByUser = []string{}
	}
	j.Emit(r)
}

func jsonEvent(ev orchestrator.Event) (JSONEvent, bool) {
	e := JSONEvent{Time: ev.Time, Agent: ev.Agent, Anon: ev.Anon, Phase: ev.Phase}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	switch ev.Kind {
	case orchestrator.EventRunStart:
		e.Type, e.Agents = "run_start", map[string]string{}
		for _, pair := range strings.Split(ev.Text, ", ") {
			if id, anon, ok := strings.Cut(pair, "="); ok {
				e.Agents[id] = anon
			}
		}
	case orchestrator.EventStart:
		e.Type = "agent_started"
	case orchestrator.EventToolResult:
		failed := ev.IsError
		e.Type, e.Tool, e.Error = "tool_call", ev.Tool, &failed
		e.Args = rawArgs(ev.Args)
		e.Decision = "allowed"
		if ev.Denied {
			e.Decision = "denied"
		}
		if ev.IsError {
			e.Message = ev.Text
		}
	case orchestrator.EventAnswer:
		e.Type, e.Text = "answer", ev.Text
	case orchestrator.EventVote:
		e.Type, e.Target, e.Text = "vote", ev.Target, ev.Text
	case orchestrator.EventInvalid:
		e.Type, e.Message = "invalid", ev.Text
	case orchestrator.EventRestart:
		e.Type, e.Message = "restart", ev.Text
	case orchestrator.EventStopped:
		e.Type, e.Message = "stopped", ev.Text
	case orchestrator.EventRetry:
		e.Type, e.Message = "retry", ev.Text
	case orchestrator.EventDecision:
		e.Type, e.Target, e.Text = "winner", ev.Target, ev.Text
	case orchestrator.EventFinalStart:
		e.Type = "final_started"
	case orchestrator.EventFinal:
		e.Type, e.Text = "final_answer", ev.Text
	case orchestrator.EventUsage:
		u := ev.Usage
		e.Type = "tokens"
		e.InputTokens, e.OutputTokens = &u.InputTokens, &u.OutputTokens
		e.CachedInputTokens, e.CacheWriteTokens, e.ReasoningTokens = &u.CachedInputTokens, &u.CacheWriteTokens, &u.ReasoningTokens
		e.CostUSD, e.TotalCostUSD = CostJSON(ev.Cost), CostJSON(ev.TotalCost)
	case orchestrator.EventBudget:
		e.Type, e.Message = "budget", ev.Text
	case orchestrator.EventError:
		e.Type, e.Message = "error", ev.Text
	default:
		return JSONEvent{}, false
	}
	return e, true
}

// rawArgs is a tool call's arguments as JSON: the object itself, or (cut short by the
// orchestrator, so no longer valid JSON) a string.
func rawArgs(args string) json.RawMessage {
	if args == "" {
		return nil
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}
