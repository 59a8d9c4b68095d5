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

	"github.com/massgen-go/massgen/backends/pricing"
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
	// CacheKey groups the requests of one run for the provider's prompt cache (OpenAI's
	// prompt_cache_key); "" sends none.
	CacheKey string
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
	// SharedPrefix is how many bytes at the start of Content other requests send too (the
	// task and the answers, before what is particular to one agent): backends with explicit
	// cache breakpoints (Anthropic's cache_control) mark the end of it. 0: none.
	SharedPrefix int
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

// Usage counts a call's tokens, by kind, as the provider reported them. InputTokens counts every
// input token, cached ones included; OutputTokens every output token, reasoning included: each
// backend normalises its provider's fields to that (Anthropic reports cache reads and writes
// beside input_tokens, Gemini thoughts beside candidates).
type Usage struct {
	InputTokens       int64
	OutputTokens      int64
	CachedInputTokens int64 // of InputTokens: read from the provider's prompt cache
	CacheWriteTokens  int64 // of InputTokens: written to the prompt cache (Anthropic)
	ReasoningTokens   int64 // of OutputTokens: reasoning ("thinking") tokens
	// CostUSD is the cost the provider reported itself (the claude CLI's total_cost_usd), 0
	// when it reported none: the catalogue prices the tokens then (backends/pricing).
	CostUSD float64
}

// Add sums usage.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CachedInputTokens += o.CachedInputTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.CostUSD += o.CostUSD
}

// Tokens are the usage's tokens as the catalogue prices them.
func (u Usage) Tokens() pricing.Tokens {
	return pricing.Tokens{Input: u.InputTokens, CachedInput: u.CachedInputTokens, CacheWrite: u.CacheWriteTokens,
		Output: u.OutputTokens, Reasoning: u.ReasoningTokens}
}

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
