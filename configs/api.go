package configs

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
)

// LoadOptions say where a config comes from and what it is resolved against.
type LoadOptions struct {
	Name    string // --config: a path, a built-in name, or @examples/NAME
	BaseDir string // current directory; relative paths resolve here
	// ProjectDir is where .massgen/ lives (internal/project.Find); "" means BaseDir.
	ProjectDir string
	Home       string                      // for ~/.massgen/.env and ~ expansion
	LookupEnv  func(string) (string, bool) // the real environment
	Logger     *zap.Logger                 // may be nil
	// Actions maps MassGen 0.1.97's backend.permissions file actions (read_file, write_file: the
	// built-in tools whose declarations say so) onto the permission engine's class of each
	// (filesystem.MassGenActions; configs cannot read the registry). Without it those actions
	// are unknown: a rule naming one is not mapped, with the warning an unknown action gets.
	// Every caller loading a user's config sets it (TestLoadCallersGiveActions).
	Actions map[string]string
}

// Warning is a problem that does not stop loading or running: an unknown key, a key massgen
// ignores (the message says what happens instead), a context path missing here.
type Warning struct {
	File    string
	Line    int
	Message string
	// Key is the key path the warning is about ("agents[0].backend.betas"), when there is one.
	Key string
	// Suggestion is what the key probably should have been ("temperature" for "temprature").
	Suggestion string
}

func (w Warning) String() string { return position(w.File, w.Line) + "warning: " + w.Message }

// Problem is one validation error at a place in a config file.
type Problem struct {
	File    string
	Line    int
	Message string
	// Key and Suggestion are as in Warning.
	Key        string
	Suggestion string
}

func (p Problem) String() string { return position(p.File, p.Line) + p.Message }

func position(file string, line int) string {
	switch {
	case file == "":
		return ""
	case line > 0:
		return fmt.Sprintf("%s:%d: ", file, line)
	default:
		return file + ": "
	}
}

// ValidationError is returned by Load when a config is malformed or invalid. It lists every
// problem found, each as "file:line: message".
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// IsValidationError reports whether err is (or wraps) a *ValidationError.
func IsValidationError(err error) bool {
	var ve *ValidationError
	return errors.As(err, &ve)
}

// defaultTimeout is used when neither orchestrator.timeout_seconds nor timeout_settings say.
const defaultTimeout = 30 * time.Minute
