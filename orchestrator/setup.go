package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/agentenv"
	"github.com/massgen-go/massgen/internal/tooldecl"
	"github.com/massgen-go/massgen/permissions"
	"github.com/massgen-go/massgen/snapshots"
)

// agent is one agent's fixed parts for the run. Its coordination state is the owner's (see
// policy.go); its tokens and cost are the ledger's (cost.go).
type agent struct {
	cfg       configs.Agent
	index     int // in the config's agent list: coordination messages name it by this
	id, anon  string
	backend   backends.Backend
	workspace string // "" when the agent has no cwd (no file tools; MCP tools only)
	tempDir   string
	env       *agentenv.Agent     // its environment: policy, tools, MCP servers (internal/agentenv)
	toolset   *filesystem.Toolset // coordination role
	tools     []backends.ToolSpec // the toolset's tools as backend specs
	toolNames map[string]bool
}

// run is one orchestrator run.
type run struct {
	o      Options
	cfg    *configs.Config
	log    *zap.Logger
	store  *snapshots.Store
	env    *agentenv.Env
	agents []*agent

	emitMu   sync.Mutex
	timeline timeline     // guarded by emitMu
	tools    tooldecl.Set // the built-in tools' declarations, for tool summaries

	// Read and written by the run's goroutine only, between coordinations (while one runs, its
	// state is the owner's).
	coord    state      // the last coordination's final state: answers, votes, why it ended
	clock    replyClock // how long the agents' replies take, carried across coordinations
	skipped  bool       // skip_coordination_rounds: this attempt had no coordination
	feedback *feedback  // why the previous attempt was restarted (nil on the first)

	ledger   *ledger  // tokens, costs and budgets
	ctl      *Control // the caller's "answer now", and the budget's stop
	cacheKey string   // the run's prompt_cache_key (OpenAI)
	prices   string   // the price catalogue's date

	maxSteps int // model calls per execution (maxSteps; benchmarks raise it)
	// restartGrace, when set (tests, benchmarks), is a fixed grace for pending restarts instead
	// of the estimate from the reply clock (state.grace).
	restartGrace time.Duration
	// observe, when set (tests), is called by the owner with every new coordination state.
	observe func(state)
}

func newRun(ctx context.Context, o Options) (*run, error) {
	cfg := o.Config
	r := &run{
		o: o, cfg: cfg, log: o.Logger,
		maxSteps: maxSteps,
		tools:    filesystem.Builtins(),
		ledger:   newLedger(len(cfg.Agents), cfg.Orchestrator.MaxCostUSD),
		ctl:      o.Control,
		cacheKey: newCacheKey(),
	}
	if r.ctl == nil {
		r.ctl = NewControl()
	}
	catalog := o.Pricing
	if catalog == nil {
		catalog = cfg.PriceCatalog()
	}
	r.prices = catalog.Date
	ids := make([]string, len(cfg.Agents))
	for i, a := range cfg.Agents {
		ids[i] = a.ID
	}
	// Every key is checked before anything starts, so a missing key is one clear error.
	if o.NewBackend == nil {
		for i, a := range cfg.Agents {
			if err := backends.CheckKey(a.Backend, o.LookupEnv); err != nil {
				return nil, errorf("agent %q (agents[%d]): %w", a.ID, i, err)
			}
		}
	}
	if err := checkScriptVars(cfg); err != nil {
		return nil, err
	}
	store, err := snapshots.New(snapshots.Options{
		SnapshotRoot: cfg.Layout().Snapshots(),
		TempRoot:     cfg.Layout().TempWorkspaces(),
		LogDir:       o.RunDir,
		Agents:       ids,
		Logger:       o.Logger,
	})
	if err != nil {
		return nil, errorf("snapshots: %w", err)
	}
	r.store = store
	readOnly := slices.Clone(o.ReadOnly)
	if o.PriorWork != "" {
		readOnly = append(readOnly, o.PriorWork)
	}
	env, err := agentenv.New(agentenv.Options{
		Config:        cfg,
		RunDir:        o.RunDir,
		ReadOnly:      readOnly,
		TempWorkspace: store.TempDir,
		Asker:         o.Asker,
		Home:          o.Home,
		Warn: func(id string, err error) {
			r.emit(Event{Kind: EventError, Agent: id, Anon: store.AnonID(id), Text: "MCP server unavailable, going on without it: " + err.Error()})
		},
		External: o.External,
		Logger:   o.Logger,
		Journal:  o.Journal,
	})
	if err != nil {
		return nil, errorf("%w", err)
	}
	r.env = env
	for i, ac := range cfg.Agents {
		a := &agent{
			cfg: ac, index: i, id: ac.ID, anon: store.AnonID(ac.ID),
			workspace: ac.Backend.CWD,
			tempDir:   store.TempDir(ac.ID),
		}
		if a.anon == "" { // defensive: the store must know every agent
			a.anon = "agent" + strconv.Itoa(i+1)
		}
		var b backends.Backend
		if o.NewBackend != nil {
			b, err = o.NewBackend(ac)
		} else {
			b, err = backends.New(ac.Backend, backends.Options{LookupEnv: o.LookupEnv, Logger: o.Logger, AgentID: ac.ID})
		}
		if err != nil {
			r.close()
			return nil, errorf("agent %q (agents[%d]): backend: %w", ac.ID, i, err)
		}
		a.backend = b
		if err := r.price(a, catalog); err != nil {
			r.close()
			return nil, err
		}
		// Every agent has an environment and a Toolset: one without a workspace is offered its
		// MCP servers' tools only.
		if a.env, err = env.Agent(ctx, ac.ID); err != nil {
			r.close()
			return nil, errorf("%w", err)
		}
		ts, err := r.toolset(a, permissions.Coordination)
		if err != nil {
			r.close()
			return nil, err
		}
		a.toolset = ts
		a.tools, a.toolNames = toolSpecs(ts)
		r.agents = append(r.agents, a)
	}
	r.clock.grow(len(r.agents))
	return r, nil
}

// price looks up what agent a's model costs. With a budget cap, every agent must be priced
// (or its provider report its cost): spending that cannot be counted cannot be capped.
func (r *run) price(a *agent, catalog *pricing.Catalog) error {
	acc := &r.ledger.agents[a.index]
	acc.cap = a.cfg.MaxCostUSD
	acc.price, acc.priced = catalog.Lookup(backends.PricingProvider(a.cfg.Backend), a.backend.Model())
	capped := r.cfg.Orchestrator.MaxCostUSD > 0 || a.cfg.MaxCostUSD > 0
	if capped && !acc.priced && !backends.ReportsCost(a.backend) {
		return errorf("agent %q (agents[%d]): %w %q (backend %s) in the price catalogue of %s or the config, so its spending cannot count against the budget: add it under pricing.models in the config (USD per million tokens), or run without a budget cap",
			a.id, a.index, ErrUnpriced, a.backend.Model(), a.cfg.Backend.Type, catalog.Date)
	}
	return nil
}

// newCacheKey is a run's prompt_cache_key: the provider routes requests with the same key to
// the same cache, so the agents' shared prefix is read from it.
func newCacheKey() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "massgen-" + hex.EncodeToString(b)
}

// toolset is an agent's Toolset for a role, as internal/agentenv builds it for the run and for
// every command that inspects one.
func (r *run) toolset(a *agent, role permissions.Role) (*filesystem.Toolset, error) {
	ts, err := a.env.Toolset(role)
	if err != nil {
		return nil, errorf("%w", err)
	}
	return ts, nil
}

// toolSpecs are the toolset's tools as offered to the model. Their descriptions leave out the
// agent's directory limits, which the Toolset appends to each: the prompt states them once, in
// its part particular to the agent (writePaths), so that the tools, the first and largest part
// of a request, are the same bytes for every agent with the same tools and a provider's prompt
// cache serves them to all.
func toolSpecs(ts *filesystem.Toolset) ([]backends.ToolSpec, map[string]bool) {
	tools := ts.Tools()
	limits := ts.DescribeLimits()
	specs := make([]backends.ToolSpec, 0, len(tools))
	names := make(map[string]bool, len(tools))
	for _, t := range tools {
		desc := t.Description
		if limits != "" {
			desc = strings.TrimSuffix(desc, "\n\n"+limits)
		}
		specs = append(specs, backends.ToolSpec{Name: t.Name, Description: desc, Parameters: t.Parameters})
		names[t.Name] = true
	}
	return specs, names
}

func (r *run) close() {
	// Backends that hold processes or folders (the coding-agent CLIs) release them.
	for _, a := range r.agents {
		if c, ok := a.backend.(io.Closer); ok {
			if err := c.Close(); err != nil {
				r.log.Warn("closing an agent's backend", zap.String("agent", a.id), zap.Error(err))
			}
		}
	}
	if r.env != nil {
		if err := r.env.Close(); err != nil {
			r.log.Warn("closing the agents' environments", zap.Error(err))
		}
		r.env = nil
	}
}

// emit stamps, logs and publishes an event; events are published one at a time, in the order
// of the calls.
func (r *run) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	fields := []zap.Field{zap.String("event", string(ev.Kind))}
	if ev.Agent != "" {
		fields = append(fields, zap.String("agent", ev.Agent), zap.String("anon", ev.Anon))
	}
	if ev.Phase != "" {
		fields = append(fields, zap.String("phase", ev.Phase))
	}
	if ev.Tool != "" {
		fields = append(fields, zap.String("tool", ev.Tool), zap.String("args", ev.Args), zap.String("summary", ev.Summary))
	}
	if ev.Target != "" {
		fields = append(fields, zap.String("target", ev.Target))
	}
	if ev.Text != "" {
		fields = append(fields, zap.String("text", ev.Text))
	}
	if ev.Denied || ev.IsError {
		fields = append(fields, zap.Bool("denied", ev.Denied), zap.Bool("error", ev.IsError))
	}
	if ev.Kind == EventUsage {
		u := ev.Usage
		fields = append(fields, zap.Int64("input_tokens", u.InputTokens), zap.Int64("output_tokens", u.OutputTokens),
			zap.Int64("cached_input_tokens", u.CachedInputTokens), zap.Int64("cache_write_tokens", u.CacheWriteTokens),
			zap.Int64("reasoning_tokens", u.ReasoningTokens), zap.String("cost", ev.Cost.String()), zap.String("total_cost", ev.TotalCost.String()))
	}
	r.timeline.note(ev)
	if ev.Kind == EventText { // throttled, yet many: only with --debug
		r.log.Debug("orchestrator event", fields...)
	} else {
		r.log.Info("orchestrator event", fields...)
	}
	if r.o.Events != nil {
		r.o.Events.Publish(ev)
	}
}

func (r *run) agentEvent(a *agent, kind EventKind, status Status, phase string) Event {
	return Event{Kind: kind, Agent: a.id, Anon: a.anon, Status: status, Phase: phase}
}

var contextVar = regexp.MustCompile(`\$\{CONTEXT_([0-9]+)\}`)

// checkScriptVars refuses to start a scripted agent whose steps use a context path that was not
// given (${CONTEXT_0} with no --context), which would otherwise write into a folder literally
// named "${CONTEXT_0}".
func checkScriptVars(cfg *configs.Config) error {
	n := len(cfg.Orchestrator.ContextPaths)
	for i, a := range cfg.Agents {
		if a.Backend.Type != "scripted" || len(a.Backend.Script) == 0 {
			continue
		}
		raw, err := json.Marshal(a.Backend.Script)
		if err != nil {
			continue
		}
		for _, m := range contextVar.FindAllSubmatch(raw, -1) {
			if k, _ := strconv.Atoi(string(m[1])); k >= n {
				return errorf("agent %q (agents[%d]): its script uses ${CONTEXT_%d} but %d context path(s) are configured: add one with --context DIR (e.g. --context .)", a.ID, i, k, n)
			}
		}
	}
	return nil
}
