// Package backends talks to LLM providers (OpenAI Responses, Chat Completions and its presets,
// Anthropic Messages, Gemini, Claude Code, and the scripted demo backend) behind one small
// streaming interface. It knows nothing about permissions or coordination.
package backends

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// Backend is one agent's connection to a model. Implementations must be safe to call from one
// goroutine at a time; each agent gets its own Backend.
type Backend interface {
	// Generate sends the conversation and streams the reply: text deltas and completed tool
	// calls are reported through onEvent as they arrive (onEvent may be nil), and the whole
	// assembled reply is returned. Cancelling ctx aborts the request promptly.
	Generate(ctx context.Context, req Request, onEvent func(Event)) (*Response, error)
	// Provider is the backend type ("openai", "claude", ...); Model is the model name.
	Provider() string
	Model() string
}

// Request is one model call.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// Phase is "coordination" or "final"; only the scripted backend looks at it.
	Phase string
	// Vars are run-time values (WORKSPACE, TEMP_WORKSPACE, CONTEXT_0, ...) the scripted backend
	// substitutes for ${NAME} in its steps; real providers ignore them.
	Vars map[string]string
}

// Message is one conversation turn. Role is "user", "assistant" or "tool".
type Message struct {
	Role    string
	Content string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID and ToolName identify the call a "tool" message answers.
	ToolCallID string
	ToolName   string
	IsError    bool
}

// ToolSpec describes a tool offered to the model. Parameters is a JSON schema object.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// ToolCall is a tool call made by the model. Arguments is the raw JSON object.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// Add sums usage.
func (u *Usage) Add(o Usage) { u.InputTokens += o.InputTokens; u.OutputTokens += o.OutputTokens }

// Response is a complete model reply.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
}

// EventKind says what an Event carries.
type EventKind int

const (
	EventTextDelta EventKind = iota
	EventToolCall
	// EventRetry: the attempt failed (429, 5xx, a reply that ended early, ...) and the call is
	// made again; Text says why. The text and tool calls streamed since the call began or
	// since the previous EventRetry are void: the reply is streamed again from the start.
	EventRetry
)

// Event is a streaming update.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall *ToolCall
}

// Options are what New needs beyond the agent's backend config.
type Options struct {
	// LookupEnv reads API keys (OPENAI_API_KEY, ...); nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// HTTPClient is used for every request (tests point it at httptest); nil means default.
	HTTPClient *http.Client
	// MaxRetries on 429 and 5xx (negative: none; 0: the default of 3).
	MaxRetries int
	Logger     *zap.Logger
	// AgentID is used in log fields and by the scripted backend.
	AgentID string

	// retryWait replaces the backoff between retries when set (tests).
	retryWait func(attempt int) time.Duration
}
