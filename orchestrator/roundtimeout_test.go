package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/configs"
)

func TestExecutionLimit(t *testing.T) {
	grace := func(s int) *int { return &s }
	tests := []struct {
		name            string
		ts              configs.TimeoutSettings
		limit, used     time.Duration
		round           int
		want            time.Duration
		wantRoundReason string
	}{
		{name: "nothing set", round: 0},
		{name: "agent timeout only", limit: 10 * time.Second, used: 4 * time.Second, want: 6 * time.Second},
		{name: "agent timeout used up", limit: 10 * time.Second, used: 11 * time.Second, want: time.Nanosecond},
		{name: "initial round, default grace", ts: configs.TimeoutSettings{InitialRoundTimeoutSeconds: 60}, want: 180 * time.Second,
			wantRoundReason: "round timeout (timeout_settings.initial_round_timeout_seconds 60s + round_timeout_grace_seconds 120s)"},
		{name: "initial setting leaves later rounds free", ts: configs.TimeoutSettings{InitialRoundTimeoutSeconds: 60}, round: 1},
		{name: "subsequent round", ts: configs.TimeoutSettings{InitialRoundTimeoutSeconds: 60, SubsequentRoundTimeoutSeconds: 30, RoundTimeoutGraceSeconds: grace(5)}, round: 3,
			want: 35 * time.Second, wantRoundReason: "subsequent_round_timeout_seconds 30s + round_timeout_grace_seconds 5s"},
		{name: "the agent timeout is tighter", ts: configs.TimeoutSettings{InitialRoundTimeoutSeconds: 60}, limit: 100 * time.Second, used: 90 * time.Second,
			want: 10 * time.Second},
		{name: "the round is tighter", ts: configs.TimeoutSettings{InitialRoundTimeoutSeconds: 60, RoundTimeoutGraceSeconds: grace(0)}, limit: 100 * time.Second,
			want: 60 * time.Second, wantRoundReason: "initial_round_timeout_seconds 60s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &configs.Config{TimeoutSettings: tt.ts}
			d, why := executionLimit(cfg, tt.limit, tt.used, tt.round)
			if d != tt.want || (tt.wantRoundReason == "") != (why == "") || !strings.Contains(why, tt.wantRoundReason) {
				t.Errorf("executionLimit = %v, %q; want %v, %q", d, why, tt.want, tt.wantRoundReason)
			}
		})
	}
}

// MassGen's round timeouts bound each coordination execution: an agent stuck in its first round
// is stopped at initial_round_timeout_seconds plus the grace, with a reason naming the keys; one
// answering at once and stuck in a later round at subsequent_round_timeout_seconds.
func TestRoundTimeouts(t *testing.T) {
	noGrace := 0
	for _, tt := range []struct {
		name     string
		ts       configs.TimeoutSettings
		bobFirst bool // bob answers in round 0, then hangs
		want     string
	}{
		{"initial round", configs.TimeoutSettings{InitialRoundTimeoutSeconds: 1, RoundTimeoutGraceSeconds: &noGrace},
			false, "round timeout (timeout_settings.initial_round_timeout_seconds 1s + round_timeout_grace_seconds 0s) reached"},
		{"subsequent round", configs.TimeoutSettings{SubsequentRoundTimeoutSeconds: 1, RoundTimeoutGraceSeconds: &noGrace},
			true, "round timeout (timeout_settings.subsequent_round_timeout_seconds 1s + round_timeout_grace_seconds 0s) reached"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "alice", "bob")
			h.cfg.TimeoutSettings = tt.ts
			// A long restart grace: alice's answer does not cut bob's first round short (it
			// would restart him into round 1 at once).
			h.grace = time.Minute
			h.scripts["alice"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
				switch {
				case c.final():
					return textResp("final alice"), nil
				case !strings.Contains(c.req.Vars["ANSWERS"], "agent1"):
					return answerResp("alice's answer"), nil
				default:
					return voteResp("agent1", "mine"), nil
				}
			}
			h.scripts["bob"] = func(ctx context.Context, c fakeCall) (*backends.Response, error) {
				if tt.bobFirst && !strings.Contains(c.req.Vars["ANSWERS"], "agent2") {
					return answerResp("bob's answer"), nil
				}
				return block(ctx)
			}
			res, err := h.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			stopped := h.ev.of(EventStopped, "bob")
			if len(stopped) != 1 || stopped[0].Text != tt.want {
				t.Fatalf("bob stopped: %v, want %q", stopped, tt.want)
			}
			if len(h.ev.of(EventStopped, "alice")) != 0 || res.FinalAnswer == "" {
				t.Errorf("alice stopped %v, result %+v", h.ev.of(EventStopped, "alice"), res)
			}
		})
	}
}
