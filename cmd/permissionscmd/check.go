package permissionscmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/permissions"
)

// CheckOptions are the inputs of `permissions check`.
type CheckOptions struct {
	IO        *cmdutil.IOStreams
	Getwd     func() (string, error)
	HomeDir   func() (string, error)
	LookupEnv func(string) (string, bool)

	ConfigName string
	Agent      string
	Final      bool
	Contexts   []string

	Tool  string
	Args  string
	Read  string
	Write string
	Batch bool
}

// NewCmdCheck returns `permissions check`; runF replaces checkRun in tests (nil: checkRun).
func NewCmdCheck(f *cmdutil.Factory, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: f.IO, Getwd: f.Getwd, HomeDir: f.HomeDir, LookupEnv: f.LookupEnv}
	cmd := &cobra.Command{
		Use:   "check --config FILE --agent ID [--final] [--context PATH[:read|write]]... (--tool NAME --args JSON | --read PATH | --write PATH | --batch)",
		Short: "Decide a tool call or a path access as a run would, and say why",
		Long: `Decides exactly as a run would (same config, agent, role and context paths) and prints
"allow" or "deny", a tab, the path that decided, a tab, and the reason. Exit status: 0 allow,
1 deny, 2 usage or config error. It contacts no backend, runs no hook and writes nothing.

--batch reads JSON lines {"tool": "...", "args": {...}} (or {"read": PATH} / {"write": PATH})
on stdin and writes one JSON line {"allowed": true|false, "path": "...", "reason": "..."} per
input line, in order; the exit status is then 0.`,
		Example: `  massgen permissions check --config my.yaml --agent agent_a --read src/main.go
  massgen permissions check --config my.yaml --agent agent_a --final --context .:write --write README.md
  massgen permissions check --config my.yaml --agent agent_a --tool execute_command --args '{"command":"npm test"}'
  printf '%s\n' '{"tool":"read_file","args":{"path":"/etc/passwd"}}' | massgen permissions check --config my.yaml --agent agent_a --batch`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return checkRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.ConfigName, "config", "c", "", "config: a YAML file, a built-in name, or @examples/NAME")
	fl.StringVar(&opts.Agent, "agent", "", "agent id (required)")
	fl.BoolVar(&opts.Final, "final", false, "decide for the final (presenting) agent instead of a coordination agent")
	fl.StringArrayVar(&opts.Contexts, "context", nil, "add a context path PATH[:read|write] (default write; repeatable)")
	fl.StringVar(&opts.Tool, "tool", "", "tool name (with --args)")
	fl.StringVar(&opts.Args, "args", "", "tool arguments as a JSON object (with --tool)")
	fl.StringVar(&opts.Read, "read", "", "check reading PATH")
	fl.StringVar(&opts.Write, "write", "", "check writing PATH")
	fl.BoolVar(&opts.Batch, "batch", false, "decide JSON lines from stdin")
	return cmd
}

func usage(format string, a ...any) error {
	return cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf(format, a...))
}

// checkRun loads the config, builds the agent's policy once and decides.
func checkRun(opts *CheckOptions) error {
	modes := 0
	for _, set := range []bool{opts.Tool != "" || opts.Args != "", opts.Read != "", opts.Write != "", opts.Batch} {
		if set {
			modes++
		}
	}
	if modes != 1 {
		return usage("permissions check: give exactly one of --tool NAME --args JSON, --read PATH, --write PATH or --batch")
	}
	if opts.Agent == "" {
		return usage("permissions check: --agent is required")
	}
	var args map[string]any
	if opts.Tool != "" || opts.Args != "" {
		if opts.Tool == "" {
			return usage("permissions check: --args needs --tool")
		}
		if opts.Args == "" {
			opts.Args = "{}"
		}
		if err := json.Unmarshal([]byte(opts.Args), &args); err != nil {
			return usage("permissions check: --args %q: not a JSON object: %v", opts.Args, err)
		}
	}
	guard, err := buildGuard(opts)
	if err != nil {
		return err
	}
	if opts.Batch {
		return runBatch(guard, opts.IO.In, opts.IO.Out)
	}
	var d permissions.Decision
	switch {
	case opts.Read != "":
		d = guard.Policy().CheckPath(opts.Read, permissions.Read)
	case opts.Write != "":
		d = guard.Policy().CheckPath(opts.Write, permissions.Write)
	default:
		d = decide(guard, opts.Tool, args)
	}
	verdict := "deny"
	if d.Allow {
		verdict = "allow"
	}
	fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\n", verdict, d.Path, oneLine(d.Reason))
	if !d.Allow {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	return nil
}

// decide is Guard.Check without side effects: no asker (an ask is a deny saying how to allow),
// no hooks, no audit.
func decide(g *permissions.Guard, tool string, args map[string]any) permissions.Decision {
	return g.Check(contextBackground(), permissions.Request{Tool: tool, Args: args})
}

func oneLine(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "\t", " ") }

func buildGuard(opts *CheckOptions) (*permissions.Guard, error) {
	wd, err := opts.Getwd()
	if err != nil {
		return nil, usage("current directory: %v", err)
	}
	home := ""
	if opts.HomeDir != nil {
		home, _ = opts.HomeDir()
	}
	cfg, warnings, err := configs.Load(configs.LoadOptions{Name: opts.ConfigName, BaseDir: wd, Home: home, LookupEnv: opts.LookupEnv})
	for _, w := range warnings {
		fmt.Fprintln(opts.IO.ErrOut, w.String())
	}
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	for _, c := range opts.Contexts {
		cp, err := configs.ParseContextFlag(c)
		if err != nil {
			return nil, usage("%v", err)
		}
		if err := cfg.AddContextPaths(wd, cp); err != nil {
			return nil, usage("--context %s: %v", c, err)
		}
	}
	project, err := permissions.LoadProjectFile(cfg.MassgenDir())
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	role := permissions.Coordination
	if opts.Final {
		role = permissions.Final
	}
	spec, err := permissions.SpecFromConfig(cfg, opts.Agent, role, permissions.SpecOptions{
		// Commands only ever run sandboxed unless the config opts out with command_sandbox: none.
		Sandboxed:    cfg.CommandSandbox != "none",
		Home:         home,
		ProjectRules: project.For(opts.Agent),
	})
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	// The tree does not change while we decide: memoized stats make --batch fast.
	pol, err := permissions.NewSnapshot(spec)
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	return permissions.NewGuard(pol, permissions.GuardOptions{}), nil
}

type batchIn struct {
	Tool  string         `json:"tool"`
	Args  map[string]any `json:"args"`
	Read  string         `json:"read"`
	Write string         `json:"write"`
}

type batchOut struct {
	Allowed bool   `json:"allowed"`
	Path    string `json:"path"`
	Reason  string `json:"reason"`
}

// runBatch decides JSON lines, answering in input order. Lines are decided in chunks by one
// worker per CPU (the policy is safe for concurrent use); a bad line gets a deny naming the
// line, and the batch goes on.
func runBatch(g *permissions.Guard, in io.Reader, out io.Writer) error {
	const chunkLines = 512
	type chunk struct {
		first int      // line number of lines[0]
		lines [][]byte // owned copies
		done  chan []byte
	}
	workers := runtime.GOMAXPROCS(0)
	todo := make(chan *chunk, workers*2)
	ordered := make(chan *chunk, workers*4)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range todo {
				c.done <- decideChunk(g, c.first, c.lines)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(todo)
		defer close(ordered)
		r := bufio.NewReaderSize(in, 1<<16)
		lineNo := 0
		cur := &chunk{first: 1, done: make(chan []byte, 1)}
		flush := func() {
			if len(cur.lines) == 0 {
				return
			}
			ordered <- cur
			todo <- cur
			cur = &chunk{first: lineNo + 1, done: make(chan []byte, 1)}
		}
		for {
			line, err := r.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				buf := append([]byte(nil), line...)
				for errors.Is(err, bufio.ErrBufferFull) {
					line, err = r.ReadSlice('\n')
					buf = append(buf, line...)
				}
				line = buf
			} else {
				line = append([]byte(nil), line...)
			}
			if len(line) == 0 && err != nil {
				if err != io.EOF {
					readErr <- fmt.Errorf("reading stdin: %w", err)
				}
				break
			}
			lineNo++
			cur.lines = append(cur.lines, line)
			if len(cur.lines) == chunkLines {
				flush()
			}
			if err != nil {
				if err != io.EOF {
					readErr <- fmt.Errorf("reading stdin: %w", err)
				}
				break
			}
		}
		flush()
	}()
	w := bufio.NewWriterSize(out, 1<<16)
	var werr error
	for c := range ordered {
		b := <-c.done
		if werr == nil {
			if _, err := w.Write(b); err != nil {
				werr = fmt.Errorf("writing stdout: %w", err)
			}
		}
	}
	wg.Wait()
	if werr != nil {
		return werr
	}
	select {
	case err := <-readErr:
		return err
	default:
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	return nil
}

// decideChunk answers consecutive lines starting at line number first.
func decideChunk(g *permissions.Guard, first int, lines [][]byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	ctx := contextBackground()
	p := g.Policy()
	for i, line := range lines {
		lineNo := first + i
		trimmed := bytes.TrimSpace(line)
		var o batchOut
		if len(trimmed) == 0 {
			o.Reason = fmt.Sprintf("line %d: empty line", lineNo)
		} else {
			var req batchIn
			if err := json.Unmarshal(trimmed, &req); err != nil {
				o.Reason = fmt.Sprintf("line %d: invalid JSON: %v", lineNo, err)
			} else {
				var d permissions.Decision
				switch {
				case req.Tool != "":
					d = g.Check(ctx, permissions.Request{Tool: req.Tool, Args: req.Args})
				case req.Read != "":
					d = p.CheckPath(req.Read, permissions.Read)
				case req.Write != "":
					d = p.CheckPath(req.Write, permissions.Write)
				default:
					d.Reason = fmt.Sprintf("line %d: no \"tool\" (or \"read\"/\"write\") given", lineNo)
				}
				o = batchOut{Allowed: d.Allow, Path: d.Path, Reason: d.Reason}
			}
		}
		_ = enc.Encode(&o) // encoding strings and bools cannot fail
	}
	return buf.Bytes()
}
