package display

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen/filesystem"
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
	// tokens: cumulative for the agent.
	InputTokens  *int64 `json:"input_tokens,omitempty"`
	OutputTokens *int64 `json:"output_tokens,omitempty"`
	// run_start: the agents (real id -> anonymous id).
	Agents map[string]string `json:"agents,omitempty"`
	// files_changed
	Files []JSONFile `json:"files,omitempty"`
}

// JSONFile is one file a turn changed in a context path.
type JSONFile struct {
	Path    string `json:"path"`
	Change  string `json:"change"` // created, modified, deleted
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// JSONResult is the last line of a turn.
type JSONResult struct {
	Type         string            `json:"type"` // "result"
	FinalAnswer  string            `json:"final_answer"`
	Winner       string            `json:"winner"`
	Votes        map[string]string `json:"votes"`
	FilesChanged []JSONFile        `json:"files_changed"`
	// DeniedByUser are the calls the user refused at the permission prompt.
	DeniedByUser []string `json:"denied_by_user"`
	Session      string   `json:"session,omitempty"`
	Turn         int      `json:"turn,omitempty"`
	ExitCode     int      `json:"exit_code"`
	Error        string   `json:"error,omitempty"`
}

// JSONFiles lists what a change set changed, for files_changed.
func JSONFiles(cs *filesystem.ChangeSet) []JSONFile {
	out := []JSONFile{}
	for _, r := range cs.Files() {
		out = append(out, JSONFile{Path: r.Path, Change: string(r.Op()), Added: r.Added, Removed: r.Removed, Binary: r.Binary})
	}
	return out
}

// Handle writes the line of an event (events of no interest to scripts write nothing).
func (j *JSON) Handle(ev orchestrator.Event) {
	if line, ok := jsonEvent(ev); ok {
		j.Emit(line)
	}
}

// Close does nothing: every line is written as it comes.
func (j *JSON) Close() {}

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
func (j *JSON) FilesChanged(cs *filesystem.ChangeSet) {
	j.Emit(JSONEvent{Type: "files_changed", Time: time.Now(), Files: JSONFiles(cs)})
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
		r.FilesChanged = []JSONFile{}
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
		in, out := ev.Usage.InputTokens, ev.Usage.OutputTokens
		e.Type, e.InputTokens, e.OutputTokens = "tokens", &in, &out
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
