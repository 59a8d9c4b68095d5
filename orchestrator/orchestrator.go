// Package orchestrator runs one turn of a MassGen task: every agent works on it at once in its own
// workspace, sees the others' answers and files under anonymous ids, posts answers and votes
// (a new answer restarts the agents still working and has the others vote again once the field
// is quiet: see policy.go), and the winner presents the final answer,
// delivering files into writable context paths. It owns coordination only: models are behind
// backends, file access behind filesystem.Toolset and its permission Guard, snapshots behind
// snapshots.Store. Everything that happens is reported on one event stream (Options.Events), a
// broker the displays and recorders subscribe to.
package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/changes"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/pubsub"
	"github.com/massgen-go/massgen/internal/vocab"
	"github.com/massgen-go/massgen/permissions"
)

// Exchange is one earlier turn of a multi-turn session.
type Exchange struct {
	User      string
	Assistant string // the final answer ("" when the turn was cancelled before one)
	// Interrupted says how the turn ended early ("" when it did not): "cancelled", or stopped
	// (by the user, the budget, the timeout). Answers are then every agent's answer so far, under
	// its anonymous id: the next turn's agents are shown them.
	Interrupted string
	Answers     []PriorAnswer
}

// PriorAnswer is an answer of an earlier, interrupted turn.
type PriorAnswer struct {
	Anon, Text string
}

// Options is everything a run needs.
type Options struct {
	Config  *configs.Config
	Task    string
	History []Exchange
	// ReadOnly are extra read-only roots for every agent (e.g. the previous turn's workspace).
	ReadOnly []string
	// PriorWork, when set, is the previous turn's agents' work, read-only: one folder per
	// anonymous id, kept by the session when that turn was cancelled or stopped.
	PriorWork string
	// RunDir is the run's log folder (permissions.jsonl and timestamped snapshots go there).
	RunDir string
	// NewBackend builds an agent's backend; nil means backends.New (after backends.CheckKey for
	// every agent, before any agent starts).
	NewBackend func(a configs.Agent) (backends.Backend, error)
	// Asker resolves "ask" decisions; nil turns asks into denies.
	Asker permissions.Asker
	// Events is the run's event stream (may be nil): every event is published on it, in the
	// order it happened, and every subscriber receives each one (a slow subscriber holds the
	// run up, so it must not block long). The caller subscribes before Run and closes the
	// broker once Run returned: every event of the run has been published by then.
	Events *pubsub.Broker[Event]
	Logger *zap.Logger

	// LookupEnv reads API keys; nil means Config.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Home is used for ~ expansion in permission rules (empty: the user's home).
	Home string
	// External, when set, provides each agent's external tools instead of its MCP servers
	// (tests).
	External func(ctx context.Context, agent configs.Agent) map[string]filesystem.External
	// Journal, when set, records the final agent's changes to context paths (change review
	// and undo); the caller finishes it after the run.
	Journal *changes.Journal
	// Pricing prices the agents' model calls (nil: Config.PriceCatalog()). The turn's budget is
	// Config.Orchestrator.MaxCostUSD, each agent's its MaxCostUSD.
	Pricing *pricing.Catalog
	// Control, when set, lets the caller stop coordination and have the leader present now.
	Control *Control
}

// Result is the outcome of a run.
type Result struct {
	FinalAnswer string
	Winner      string // real id of the presenting agent
	WinnerAnon  string
	// Votes maps voter -> voted-for agent (real ids); Answers maps agent -> its latest answer.
	Votes   map[string]string
	Answers map[string]string
	// Usage is the tokens each agent used (coordination and presentation), Cost what they
	// cost (unknown for a model without a price), TotalCost the turn's.
	Usage     map[string]backends.Usage
	Cost      map[string]pricing.Cost
	TotalCost pricing.Cost
	// MaxCostUSD is the turn's budget (0: none); PricesDate the date of the price catalogue.
	MaxCostUSD float64
	PricesDate string
	// FinalWorkspace is the winner's workspace, kept after the run ("" without one).
	FinalWorkspace string
	// Delivered are the files the final agent wrote into context paths (absolute, sorted).
	Delivered []string
	// EndedEarly says why coordination ended before every agent voted ("" when it did not);
	// StoppedBy who ended it: StoppedByUser, StoppedByBudget or StoppedByTimeout ("" when no
	// one did: every agent voted, or every agent stopped).
	EndedEarly string
	StoppedBy  string
	// Cancelled: the run was cancelled (Run returned an error with this partial result).
	Cancelled bool
	// Work is every agent's part of the turn, in config order; a cancelled or stopped turn
	// fills Snapshot (what the session keeps so that nothing paid for is lost).
	Work []AgentWork
	// Attempts is how many times coordination ran: 1, plus one per orchestration restart
	// (coordination.max_orchestration_restarts).
	Attempts int
	// Timeline is the run's start, answers, votes, restarts, stops, decision and final answer,
	// in order (see Moment).
	Timeline []Moment
}

// AgentWork is what one agent did in a turn: its latest answer ("" when none) and the folder
// of its latest snapshot ("" when none was kept).
type AgentWork struct {
	ID, Anon string
	Answer   string
	Snapshot string
}

// Phases, as passed to backends in Request.Phase.
const (
	PhaseCoordination = string(vocab.PhaseCoordination)
	PhaseFinal        = string(vocab.PhaseFinal)
)

// maxRetries is how many invalid workflow replies an agent may follow with another try
// (MassGen's enforcement retries); the next invalid one stops it.
const maxRetries = 3

// maxSteps bounds the model calls of one execution, so a model that only ever calls file tools
// is stopped with a reason instead of looping until the overall timeout.
const maxSteps = 200

// maxAnswerBytes bounds one new_answer: every answer goes into every agent's prompt.
const maxAnswerBytes = 128 << 10

// maxReasonRunes bounds the vote reason kept (and shown to the final agent).
const maxReasonRunes = 2000

// A working agent given a pending restart may go on until the model reply in flight is due to
// end, but at least minRestartGrace and at most maxRestartGrace (see state.grace, and
// docs/orchestrator.md, "Restarts", for the measurements behind them).
const (
	minRestartGrace = time.Second
	maxRestartGrace = 30 * time.Second
)

// maxToolCallsPerReply bounds the tool calls run for one model reply; the rest get an error
// result without running, so one reply cannot queue unbounded work and results.
const maxToolCallsPerReply = 100

// ErrNoAnswer is returned when coordination ends with no answer at all.
var ErrNoAnswer = errors.New("no agent produced an answer")

// Run runs one turn. On cancellation it stops every agent and returns an error wrapping
// ctx.Err() with a partial result (Cancelled, the answers, usage and every agent's work kept);
// what was saved stays saved.
func Run(ctx context.Context, o Options) (*Result, error) {
	return runTuned(ctx, o, nil)
}

// runTuned is Run with tune (when not nil) applied to the run before it starts: tests and
// benchmarks shorten its limits.
func runTuned(ctx context.Context, o Options, tune func(*run)) (*Result, error) {
	if o.Config == nil {
		return nil, errors.New("orchestrator: no config")
	}
	if len(o.Config.Agents) == 0 {
		return nil, errors.New("orchestrator: the config has no agents")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.LookupEnv == nil {
		o.LookupEnv = o.Config.LookupEnv
	}
	r, err := newRun(ctx, o)
	if err != nil {
		return nil, err
	}
	defer r.close()
	if tune != nil {
		tune(r)
	}
	res, err := r.run(ctx)
	if res != nil {
		r.emitMu.Lock()
		res.Timeline = slices.Clone(r.timeline.moments)
		r.emitMu.Unlock()
	}
	return res, err
}

// agentTimeout is orchestrator.agent_timeout_seconds (0: none).
func agentTimeout(cfg *configs.Config) time.Duration {
	if s := cfg.Orchestrator.AgentTimeoutSeconds; s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

func errorf(format string, args ...any) error { return fmt.Errorf("orchestrator: "+format, args...) }
