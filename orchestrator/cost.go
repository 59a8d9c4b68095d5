package orchestrator

import (
	"errors"
	"fmt"
	"sync"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/backends/pricing"
)

// Who ended coordination early (Result.StoppedBy).
const (
	StoppedByUser    = "user"    // the user's "answer now" (Ctrl-C, Control.AnswerNow)
	StoppedByBudget  = "budget"  // the turn's budget (orchestrator.max_cost_usd, --max-cost) was spent
	StoppedByTimeout = "timeout" // the overall timeout
)

// budgetWarnings are the shares of a budget at which a warning is shown, once each.
var budgetWarnings = []float64{0.5, 0.75, 0.9}

// errBudget ends a model call that would start after a budget was spent (a budgetError says
// which).
var errBudget = errors.New("budget spent")

// budgetError is errBudget naming the budget: "the turn's budget of $1.00", "its budget of $0.50".
type budgetError struct{ what string }

func (e budgetError) Error() string        { return "budget spent: " + e.what }
func (e budgetError) Is(target error) bool { return target == errBudget }

// spentText says which budget err (an errBudget) is, and that it was spent.
func spentText(err error) string {
	var be budgetError
	if errors.As(err, &be) {
		return be.what + " was spent"
	}
	return "the budget was spent"
}

// ErrUnpriced is returned by Run when a budget cap is set and some agent's model has no price
// (it is neither in the catalogue nor in the config's pricing:): its spending could not be
// counted against the cap.
var ErrUnpriced = errors.New("no price for the model")

// ledger is where a turn's tokens and money are counted, and its budgets kept: converse adds
// each model call's usage (record) and asks before each request whether it may start (allows).
// Agents' goroutines call it concurrently.
type ledger struct {
	mu     sync.Mutex
	agents []account
	cap    float64 // the turn's budget in USD (0: none)
	warned int     // budgetWarnings given for the turn's budget
	over   bool    // the turn's budget is spent
}

// account is one agent's part of the ledger.
type account struct {
	price  pricing.Price
	priced bool // price is known
	usage  backends.Usage
	// A cost the provider reported (the claude CLI's total_cost_usd) stands for the calls since
	// its previous report: a CLI turn spans several calls and its result prices them all.
	// settled is the cost up to the last report, pending the catalogue's price of the calls since.
	settled, pending pricing.Cost
	cap              float64
	warned           int
	over             bool
}

func (a *account) cost() pricing.Cost { return a.settled.Plus(a.pending) }

func newLedger(n int, turnCap float64) *ledger {
	l := &ledger{agents: make([]account, n), cap: turnCap}
	for i := range l.agents {
		l.agents[i].settled, l.agents[i].pending = pricing.Free, pricing.Free
	}
	return l
}

// budgetWarning is a warning due: of the turn's budget, or of the agent's own.
type budgetWarning struct {
	text  string
	agent bool
}

// recorded is what one model call changed.
type recorded struct {
	usage     backends.Usage  // the agent's, so far
	cost      pricing.Cost    // the agent's, so far
	total     pricing.Cost    // the turn's, so far
	warnings  []budgetWarning // budget warnings now due
	turnOver  bool            // this call spent the turn's budget
	agentOver bool            // this call spent the agent's budget
}

// record adds a call's usage to agent i.
func (l *ledger) record(i int, u backends.Usage) recorded {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := &l.agents[i]
	a.usage.Add(u)
	switch {
	case u.CostUSD > 0: // the report replaces the estimate of the calls since the last one
		a.settled, a.pending = a.settled.Plus(pricing.Known(u.CostUSD)), pricing.Free
	case a.priced:
		a.pending = a.pending.Plus(pricing.Known(a.price.Cost(u.Tokens())))
	default:
		a.pending = a.pending.Plus(pricing.Cost{}) // unknown from now on, until a report
	}
	rec := recorded{usage: a.usage, cost: a.cost(), total: l.total()}
	// Budgets count what is known: a cap needs every agent priced (see newRun).
	if l.cap > 0 && !l.over {
		for l.warned < len(budgetWarnings) && rec.total.USD >= budgetWarnings[l.warned]*l.cap {
			rec.warnings = append(rec.warnings, budgetWarning{text: budgetText("the turn's", rec.total.USD, l.cap, budgetWarnings[l.warned])})
			l.warned++
		}
		if rec.total.USD >= l.cap {
			l.over, rec.turnOver = true, true
		}
	}
	if a.cap > 0 && !a.over {
		for a.warned < len(budgetWarnings) && rec.cost.USD >= budgetWarnings[a.warned]*a.cap {
			rec.warnings = append(rec.warnings, budgetWarning{text: budgetText("its", rec.cost.USD, a.cap, budgetWarnings[a.warned]), agent: true})
			a.warned++
		}
		if rec.cost.USD >= a.cap {
			a.over, rec.agentOver = true, true
		}
	}
	return rec
}

// total is the turn's cost: known when every agent's is.
func (l *ledger) total() pricing.Cost {
	t := pricing.Free
	for i := range l.agents {
		t = t.Plus(l.agents[i].cost())
	}
	return t
}

func budgetText(whose string, spent, cap, share float64) string {
	return fmt.Sprintf("%s budget: %s of %s spent (%d%%)", whose, pricing.Format(spent), pricing.Format(cap), int(share*100))
}

// allows says whether agent i may start a model request: not once the turn's budget, or its
// own, is spent.
func (l *ledger) allows(i int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.over:
		return budgetError{"the turn's budget of " + pricing.Format(l.cap)}
	case l.agents[i].over:
		return budgetError{"its budget of " + pricing.Format(l.agents[i].cap)}
	}
	return nil
}

// turnOver says whether the turn's budget is spent.
func (l *ledger) turnOver() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.over
}

// snapshot returns every agent's usage and cost, and the turn's cost.
func (l *ledger) snapshot() ([]backends.Usage, []pricing.Cost, pricing.Cost) {
	l.mu.Lock()
	defer l.mu.Unlock()
	us, cs := make([]backends.Usage, len(l.agents)), make([]pricing.Cost, len(l.agents))
	for i := range l.agents {
		us[i], cs[i] = l.agents[i].usage, l.agents[i].cost()
	}
	return us, cs, l.total()
}

// Control is the caller's hand on a run in progress (the user's Ctrl-C): AnswerNow stops
// coordination and has the current leader present the final answer, as the overall timeout
// does. A Control serves one run at a time; it is safe for concurrent use.
type Control struct {
	mu    sync.Mutex
	owner *owner   // the coordination running (nil: none)
	ids   []string // its agents' real ids, by index
}

// NewControl returns a Control to pass in Options.Control.
func NewControl() *Control { return &Control{} }

// AnswerNow stops coordination and has the leader (most votes, then the answer posted first)
// present the final answer; it returns the leader's real id. ok is false, and nothing changes,
// when there is nothing to present now: no coordination is running (it has not started, or the
// final presentation is under way) or no agent has answered yet.
func (c *Control) AnswerNow() (leader string, ok bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owner == nil {
		return "", false
	}
	rep, ok := c.owner.request(answerNow{reason: "stopped by the user (Ctrl-C) before every agent voted; presenting the best answer so far"})
	if !ok || rep.err != nil {
		return "", false
	}
	return c.ids[rep.leader], true
}

// attach and detach bracket a coordination.
func (c *Control) attach(o *owner, ids []string) {
	c.mu.Lock()
	c.owner, c.ids = o, ids
	c.mu.Unlock()
}

func (c *Control) detach() {
	c.mu.Lock()
	c.owner = nil
	c.mu.Unlock()
}

// stop sends m to the coordination running, if any (a spent budget).
func (c *Control) stop(m stopCoordination) {
	c.mu.Lock()
	o := c.owner
	c.mu.Unlock()
	if o != nil {
		o.post(m)
	}
}
