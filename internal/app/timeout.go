package app

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/display"
	"github.com/massgen-go/massgen/orchestrator"
)

// A turn the overall timeout ended says so, everywhere: which timeout, its value and the
// config key that sets it, on stderr, in the log and in the JSON result; without an answer it
// exits 3 (timeout) like one that presented the best answer so far, never 1 with "no agent
// produced an answer".

// timeoutNoAnswer is the message of a turn the overall timeout ended before any answer.
func timeoutNoAnswer(cfg *configs.Config) string {
	d, key := cfg.OverallTimeoutSource()
	return fmt.Sprintf("the overall timeout (%s) was reached before any agent answered: there is nothing to present. %s; `massgen --continue` starts from the work kept",
		timeoutSetting(d, key), raiseTimeout(key))
}

// timeoutSetting is "orchestrator.timeout_seconds: 1s", or "30m0s, the default".
func timeoutSetting(d time.Duration, key string) string {
	if key == "default" {
		return d.String() + ", the default"
	}
	return key + ": " + d.String()
}

// raiseTimeout says how to give the agents more time.
func raiseTimeout(key string) string {
	if key == "default" {
		key = configs.OverallTimeoutKey
	}
	return "Raise " + key + " in the config"
}

// logTimeout records which timeout ended the turn.
func logTimeout(log *zap.Logger, cfg *configs.Config, answered bool) {
	d, key := cfg.OverallTimeoutSource()
	log.Warn("timeout", zap.String("timeout_key", key), zap.Float64("timeout_seconds", d.Seconds()), zap.Bool("answered", answered))
}

// jsonTimeout is the result's timeout when the overall timeout ended the turn (nil otherwise).
func jsonTimeout(cfg *configs.Config, res *orchestrator.Result) *display.JSONTimeout {
	if res == nil || res.StoppedBy != orchestrator.StoppedByTimeout {
		return nil
	}
	d, key := cfg.OverallTimeoutSource()
	return &display.JSONTimeout{Key: key, Seconds: d.Seconds()}
}

// reportTimeoutNoAnswer ends a turn the overall timeout stopped before any answer: the message
// on stderr, the log, exit 3. An interactive session goes on (the code is kept for its end).
func reportTimeoutNoAnswer(opts *RunOptions, st *runState, out *Outcome) error {
	logTimeout(st.logger, st.cfg, false)
	fmt.Fprintln(opts.IO.ErrOut, "Error:", timeoutNoAnswer(st.cfg))
	out.print(opts.IO.ErrOut)
	st.code = cmdutil.Worst(st.code, cmdutil.ExitTimeout)
	return cmdutil.Silent(cmdutil.ExitTimeout)
}
