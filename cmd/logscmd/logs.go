// Package logscmd implements `massgen logs`: print the latest run's log
// (.massgen/logs/log_<time>/massgen.log), readable or as written, and with --follow keep
// printing until that run ends.
package logscmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/layout"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/logging"
)

// Options are the inputs of `massgen logs`.
type Options struct {
	IO    *cmdutil.IOStreams
	Getwd func() (string, error)
	// Project finds the project folder (cmdutil.Factory.Project); nil: from Getwd.
	Project func() (wd, dir string, err error)
	// Poll is how often --follow looks for new lines (default 200ms).
	Poll   time.Duration
	Follow bool // --follow
	Raw    bool // --raw: the JSON lines as written
}

// NewCmd returns the `logs` command.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, Getwd: f.Getwd, Project: f.Project}
	cmd := &cobra.Command{
		Use:     "logs [--follow] [--raw]",
		Aliases: []string{"log"},
		Short:   "Print the latest run's log (.massgen/logs/); --follow keeps printing until the run ends",
		Long: `Prints the log of the latest run of this project (its .massgen/ is found from any folder below it):
.massgen/logs/log_<YYYYMMDD_HHMMSS>/massgen.log (the newest folder by the time in its name).
Each line is shown as "time LEVEL message key=value ..."; --raw prints the JSON lines as written
(characters that could drive the terminal written as JSON escapes, which decode the same).

--follow keeps printing new lines until the run writes its last line ("run end") or Ctrl-C.
Start it in a second terminal while a run is going on. Exit 1 when there is no log yet.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing until the run ends (or Ctrl-C)")
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "print the JSON lines as written")
	return cmd
}

// Run prints the latest run's log.
func Run(ctx context.Context, opts *Options) error {
	wd, proj, err := cmdutil.FindProject(opts.Project, opts.Getwd, nil)
	if err != nil {
		return err
	}
	cmdutil.SayProject(opts.IO.ErrOut, wd, proj)
	l := layout.OfProject(proj)
	dir, err := logging.Latest(l.Dir())
	if errors.Is(err, fs.ErrNotExist) {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("no run log in %s: runs of this project write their logs there",
			l.Logs()))
	}
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, err)
	}
	path := filepath.Join(dir, logging.FileName)
	f, err := os.Open(path)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("logs: %w", err))
	}
	defer f.Close()
	fmt.Fprintf(opts.IO.ErrOut, "Log: %s\n", path)
	emit := func(line []byte) error {
		if opts.Raw {
			line = termtext.JSON(line) // the same JSON, with nothing that could drive the terminal
		} else {
			line = append(Format(line), '\n')
		}
		_, err := opts.IO.Out.Write(line)
		return err
	}
	r := bufio.NewReader(f)
	if !opts.Follow {
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if !bytes.HasSuffix(line, []byte("\n")) {
					line = append(line, '\n')
				}
				if werr := emit(line); werr != nil {
					return werr
				}
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("logs: %w", err))
			}
		}
	}
	return follow(ctx, r, opts.Poll, emit)
}

// follow prints complete lines as they are appended, until the run's last line (logging.RunEnd)
// or ctx ends (Ctrl-C: exit 130). A line still being written is held back until its newline.
func follow(ctx context.Context, r *bufio.Reader, poll time.Duration, emit func([]byte) error) error {
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	var partial []byte
	for {
		chunk, err := r.ReadBytes('\n')
		partial = append(partial, chunk...)
		switch {
		case err == nil:
			line := partial
			partial = nil
			if werr := emit(line); werr != nil {
				return werr
			}
			if isRunEnd(line) {
				return nil
			}
			continue
		case !errors.Is(err, io.EOF):
			return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("logs: %w", err))
		}
		select {
		case <-ctx.Done():
			return cmdutil.Silent(cmdutil.ExitCanceled)
		case <-ticker.C:
		}
	}
}

// isRunEnd reports whether a log line is a run's last one.
func isRunEnd(line []byte) bool {
	var m struct {
		Msg string `json:"msg"`
	}
	return json.Unmarshal(line, &m) == nil && m.Msg == logging.RunEnd
}

// Format turns one JSON log line into "time LEVEL message key=value ...", keeping the fields in
// the order they were written. A line that is not a JSON object is returned as it is. Either way
// it is cleaned for the terminal (termtext.Line): the log holds agents' file names and results.
func Format(line []byte) []byte {
	return []byte(termtext.Line(string(format(line))))
}

func format(line []byte) []byte {
	line = bytes.TrimRight(line, "\r\n")
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return line
	}
	var ts, level, msg string
	var fields []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return line
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return line
		}
		val, isString := value(v)
		switch key {
		case "ts":
			ts = val
		case "level":
			level = strings.ToUpper(val)
		case "msg":
			msg = val
		default:
			if isString && (val == "" || strings.ContainsAny(val, " \t\n\"=")) {
				val = fmt.Sprintf("%q", val)
			}
			fields = append(fields, key+"="+val)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-5s %s", ts, level, msg)
	for _, f := range fields {
		b.WriteString(" " + f)
	}
	return []byte(b.String())
}

// value is a JSON value as text: a string unquoted, anything else as compact JSON.
func value(v json.RawMessage) (text string, isString bool) {
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) == nil {
		return buf.String(), false
	}
	return string(v), false
}
