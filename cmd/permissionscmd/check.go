package permissionscmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen/cmd/cmdutil"
	"github.com/massgen-go/massgen/internal/agentenv"
	"github.com/massgen-go/massgen/internal/termtext"
	"github.com/massgen-go/massgen/permissions"
)

// CheckOptions are the inputs of `permissions check`.
type CheckOptions struct {
	IO *cmdutil.IOStreams
	// OpenAgent builds the agent's environment as a run does (cmdutil.Factory.OpenAgent).
	OpenAgent func(context.Context, cmdutil.AgentRequest) (*cmdutil.AgentEnv, error)

	Target cmdutil.AgentRequest // --config, --agent, --final, --context, --hooks

	Tool  string
	Args  string
	Read  string
	Write string
	Batch bool
}

// NewCmdCheck returns `permissions check`; runF replaces checkRun in tests (nil: checkRun).
func NewCmdCheck(f *cmdutil.Factory, runF func(context.Context, *CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: f.IO, OpenAgent: f.OpenAgent}
	cmd := &cobra.Command{
		Use:   "check --config FILE --agent ID [--final] [--context PATH[:read|write]]... [--hooks] (--tool NAME --args JSON | --read PATH | --write PATH | --batch)",
		Short: "Decide a tool call or a path access as a run would, and say why",
		Long: `Decides exactly as a run would (same config, project rules, agent, role and context paths,
same tools offered) and prints "allow" or "deny", a tab, the path that decided, a tab, and the
reason. Exit status: 0 allow, 1 deny, 2 usage or config error. It contacts no backend, starts
no MCP server and writes nothing. Pre-tool-use hooks run only with --hooks (without it, stderr
says when hooks would have run); a tool of an MCP server is decided as if the server offers it.

--batch reads JSON lines {"tool": "...", "args": {...}} (or {"read": PATH} / {"write": PATH})
on stdin and writes one JSON line {"allowed": true|false, "path": "...", "rule": "...",
"reason": "..."} per input line, in order; the exit status is then 0.`,
		Example: `  massgen permissions check --config my.yaml --agent agent_a --read src/main.go
  massgen permissions check --config my.yaml --agent agent_a --final --context .:write --write README.md
  massgen permissions check --config my.yaml --agent agent_a --tool execute_command --args '{"command":"npm test"}'
  printf '%s\n' '{"tool":"read_file","args":{"path":"/etc/passwd"}}' | massgen permissions check --config my.yaml --agent agent_a --batch`,
		Args:          cmdutil.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	cmd.SetFlagErrorFunc(cmdutil.FlagErrorFunc)
	fl := cmd.Flags()
	cmdutil.AddAgentFlags(cmd, &opts.Target)
	fl.BoolVar(&opts.Target.Hooks, "hooks", false, "also run the pre-tool-use hooks, as a run does")
	fl.StringVar(&opts.Tool, "tool", "", "tool name (with --args)")
	fl.StringVar(&opts.Args, "args", "", "tool arguments as a JSON object (with --tool)")
	fl.StringVar(&opts.Read, "read", "", "check reading PATH")
	fl.StringVar(&opts.Write, "write", "", "check writing PATH")
	fl.BoolVar(&opts.Batch, "batch", false, "decide JSON lines from stdin")
	return cmd
}

// checker decides for one agent in one role.
type checker struct {
	agent *agentenv.Agent
	role  agentenv.Role
	pol   *permissions.Policy
}

func (c *checker) call(ctx context.Context, tool string, args map[string]any) permissions.Decision {
	d, err := c.agent.Decide(ctx, c.role, permissions.Request{Tool: tool, Args: args})
	if err != nil { // the role was built when the checker was: this cannot fail now
		return permissions.Decision{Reason: err.Error()}
	}
	return d
}

// checkRun loads the config, builds the agent's environment once and decides.
func checkRun(ctx context.Context, opts *CheckOptions) error {
	modes := 0
	for _, set := range []bool{opts.Tool != "" || opts.Args != "", opts.Read != "", opts.Write != "", opts.Batch} {
		if set {
			modes++
		}
	}
	if modes != 1 {
		return cmdutil.FlagErrorf("permissions check: give exactly one of --tool NAME --args JSON, --read PATH, --write PATH or --batch")
	}
	if opts.Target.Agent == "" {
		return cmdutil.FlagErrorf("permissions check: --agent is required")
	}
	var args map[string]any
	if opts.Tool != "" || opts.Args != "" {
		if opts.Tool == "" {
			return cmdutil.FlagErrorf("permissions check: --args needs --tool")
		}
		if opts.Args == "" {
			opts.Args = "{}"
		}
		if err := json.Unmarshal([]byte(opts.Args), &args); err != nil {
			return cmdutil.FlagErrorf("permissions check: --args %q: not a JSON object: %v", opts.Args, err)
		}
	}
	target := opts.Target
	target.DecideOnly = true
	env, err := opts.OpenAgent(ctx, target)
	if err != nil {
		return err
	}
	defer env.Close()
	guard, err := env.Agent.Guard(env.Role)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	c := &checker{agent: env.Agent, role: env.Role, pol: guard.Policy()}
	if h := env.Agent.Hooks(); !opts.Target.Hooks && len(h.PreToolUse) > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "note: %d pre-tool-use hook(s) not run; in a run they may deny what is allowed here (--hooks runs them)\n", len(h.PreToolUse))
	}
	if opts.Batch {
		return runBatch(ctx, c, opts.IO.In, opts.IO.Out)
	}
	var d permissions.Decision
	switch {
	case opts.Read != "":
		d = c.pol.CheckPath(opts.Read, permissions.Read)
	case opts.Write != "":
		d = c.pol.CheckPath(opts.Write, permissions.Write)
	default:
		d = c.call(ctx, opts.Tool, args)
	}
	verdict := "deny"
	if d.Allow {
		verdict = "allow"
	}
	fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\n", verdict, termtext.Line(d.Path), termtext.Squeeze(d.Reason, 0))
	if !d.Allow {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	return nil
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
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason"`
}

// runBatch decides JSON lines, answering in input order. Lines are decided in chunks by one
// worker per CPU (the policy is safe for concurrent use); a bad line gets a deny naming the
// line, and the batch goes on.
func runBatch(ctx context.Context, c *checker, in io.Reader, out io.Writer) error {
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
			for ch := range todo {
				ch.done <- decideChunk(ctx, c, ch.first, ch.lines)
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
	for ch := range ordered {
		b := <-ch.done
		if werr == nil {
			if _, err := w.Write(termtext.JSON(b)); err != nil {
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
func decideChunk(ctx context.Context, c *checker, first int, lines [][]byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	p := c.pol
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
					d = c.call(ctx, req.Tool, req.Args)
				case req.Read != "":
					d = p.CheckPath(req.Read, permissions.Read)
				case req.Write != "":
					d = p.CheckPath(req.Write, permissions.Write)
				default:
					d.Reason = fmt.Sprintf("line %d: no \"tool\" (or \"read\"/\"write\") given", lineNo)
				}
				o = batchOut{Allowed: d.Allow, Path: d.Path, Rule: string(d.Rule), Reason: d.Reason}
			}
		}
		_ = enc.Encode(&o) // encoding strings and bools cannot fail
	}
	return buf.Bytes()
}
