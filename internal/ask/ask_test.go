package ask

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/permissions"
)

// oneByteReader returns at most one byte per Read. huh's accessible mode opens a new
// bufio.Scanner for every field; with a plain reader the first scanner would swallow the
// answers meant for later prompts.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func sampleRequest(agent string) permissions.AskRequest {
	return permissions.AskRequest{
		Agent:  agent,
		Role:   permissions.Final,
		Tool:   "write_file",
		Args:   map[string]any{"path": "/proj/index.html", "content": "x"},
		Paths:  []string{"/proj/index.html"},
		Rule:   "ask-context-write",
		Reason: "mode default asks before the final agent writes to a context path",
	}
}

func TestAskAccessible(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  permissions.AskAnswer
	}{
		{"deny", "1\n", permissions.AskDeny},
		{"allow once", "2\n", permissions.AskAllowOnce},
		{"allow for this run", "3\n", permissions.AskAllowRun},
		{"enter takes the default, deny", "\n", permissions.AskDeny},
		{"end of input denies", "", permissions.AskDeny},
		{"invalid choice asks again", "9\nyes\n2\n", permissions.AskAllowOnce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			a := NewAsker(AskOptions{In: oneByteReader{strings.NewReader(tt.input)}, Out: &out, Accessible: true})
			got, err := a.Ask(t.Context(), sampleRequest("agent_a"))
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if got != tt.want {
				t.Errorf("answer = %v, want %v\noutput:\n%s", got, tt.want, out.String())
			}
			for _, want := range []string{"agent_a", "write_file", "/proj/index.html", "ask-context-write", "Allow once", "Allow for this run", "Deny"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("prompt lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestAskSequentialAnswersFromOneStream(t *testing.T) {
	// Three asks read three answers from the same stream, in order.
	var out bytes.Buffer
	a := NewAsker(AskOptions{In: oneByteReader{strings.NewReader("3\n\n2\n")}, Out: &out, Accessible: true})
	want := []permissions.AskAnswer{permissions.AskAllowRun, permissions.AskDeny, permissions.AskAllowOnce}
	for i, w := range want {
		req := sampleRequest("agent_a")
		req.Paths = []string{fmt.Sprintf("/proj/file%d.html", i)}
		got, err := a.Ask(t.Context(), req)
		if err != nil || got != w {
			t.Errorf("ask %d = %v, %v; want %v", i, got, err, w)
		}
	}
}

// TestAskQueuesConcurrentAgents: two agents ask at once; the user sees one complete prompt,
// answers it, then the other. The buffer and reader are deliberately unsynchronised: if both
// prompts ran at once, -race would report it and the answers would be garbled.
func TestAskQueuesConcurrentAgents(t *testing.T) {
	var out bytes.Buffer
	a := NewAsker(AskOptions{In: oneByteReader{strings.NewReader("2\n1\n")}, Out: &out, Accessible: true})

	agents := []string{"agent_a", "agent_b"}
	answers := make(map[string]permissions.AskAnswer)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range agents {
		wg.Go(func() {
			ans, err := a.Ask(t.Context(), sampleRequest(id))
			if err != nil {
				t.Errorf("%s: %v", id, err)
			}
			mu.Lock()
			answers[id] = ans
			mu.Unlock()
		})
	}
	wg.Wait()

	text := out.String()
	ia, ib := strings.Index(text, "Agent agent_a"), strings.Index(text, "Agent agent_b")
	if ia < 0 || ib < 0 {
		t.Fatalf("both agents should have been asked:\n%s", text)
	}
	first, second := "agent_a", "agent_b"
	if ib < ia {
		first, second = second, first
		ia, ib = ib, ia
	}
	// The first prompt is complete (its number prompt shown) before the second one starts.
	if p := strings.Index(text[ia:], "Enter a number"); p < 0 || ia+p > ib {
		t.Errorf("prompts interleaved:\n%s", text)
	}
	if strings.Count(text, "Enter a number") != 2 {
		t.Errorf("want exactly two number prompts:\n%s", text)
	}
	if answers[first] != permissions.AskAllowOnce || answers[second] != permissions.AskDeny {
		t.Errorf("answers = %v; want %s allow once (first answer), %s deny", answers, first, second)
	}
}

// signalWriter closes seen the first time want is written.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func TestAskQueuedPromptGivesUpWhenCancelled(t *testing.T) {
	pr, pw := io.Pipe()
	out := &signalWriter{want: "Enter a number", seen: make(chan struct{})}
	a := NewAsker(AskOptions{In: oneByteReader{pr}, Out: out, Accessible: true})

	firstDone := make(chan permissions.AskAnswer)
	go func() {
		ans, _ := a.Ask(context.Background(), sampleRequest("agent_a"))
		firstDone <- ans
	}()
	<-out.seen // agent_a now owns the prompt and waits for input

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ans, err := a.Ask(ctx, sampleRequest("agent_b"))
	if ans != permissions.AskDeny || !errors.Is(err, context.Canceled) {
		t.Errorf("queued ask with a cancelled context = %v, %v; want deny, context.Canceled", ans, err)
	}

	if _, err := pw.Write([]byte("3\n")); err != nil {
		t.Fatal(err)
	}
	if got := <-firstDone; got != permissions.AskAllowRun {
		t.Errorf("first ask = %v, want allow for this run", got)
	}
	_ = pw.Close()
}

func TestDetailsForCommandWithoutPaths(t *testing.T) {
	req := permissions.AskRequest{Agent: "a", Tool: "execute_command", Args: map[string]any{"command": "rm -rf build"}, Rule: "ask-command"}
	d := Details(req)
	if !strings.Contains(d, "command: rm -rf build") || !strings.Contains(d, "rule: ask-command") {
		t.Errorf("Details = %q", d)
	}
	if !strings.Contains(Title(req), "(coordination)") {
		t.Errorf("Title = %q", Title(req))
	}
}

// TestAskAllowForThisRunAnswersQueuedDuplicates: the same agent asks twice for the same write
// (two calls in one reply); "allow for this run" on the first answers the second without a
// second prompt.
func TestAskAllowForThisRunAnswersQueuedDuplicates(t *testing.T) {
	var out bytes.Buffer
	a := NewAsker(AskOptions{In: oneByteReader{strings.NewReader("3\n")}, Out: &out, Accessible: true})
	var wg sync.WaitGroup
	answers := make([]permissions.AskAnswer, 2)
	for i := range answers {
		wg.Go(func() {
			ans, err := a.Ask(t.Context(), sampleRequest("agent_a"))
			if err != nil {
				t.Error(err)
			}
			answers[i] = ans
		})
	}
	wg.Wait()
	if answers[0] != permissions.AskAllowRun || answers[1] != permissions.AskAllowRun {
		t.Errorf("answers = %v", answers)
	}
	if n := strings.Count(out.String(), "Enter a number"); n != 1 {
		t.Errorf("prompted %d times:\n%s", n, out.String())
	}
	// A different path is asked again (end of input: deny).
	other := sampleRequest("agent_a")
	other.Paths = []string{"/proj/other.html"}
	if ans, _ := a.Ask(t.Context(), other); ans != permissions.AskDeny {
		t.Errorf("other path = %v, want deny", ans)
	}
}

// TestAskShowsTheChange: a write shows the diff of the file against the new content, an edit
// the diff of the edit, a command the command; the user's denials are counted.
func TestAskShowsTheChange(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	if err := os.WriteFile(page, []byte("<h1>old</h1>\n<p>same</p>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  permissions.AskRequest
		want []string
	}{
		{"write_file", permissions.AskRequest{Agent: "a", Role: permissions.Final, Tool: "write_file",
			Args: map[string]any{"path": page, "content": "<h1>new</h1>\n<p>same</p>\n"}, Paths: []string{page}},
			[]string{"--- " + page, "+++ " + page, "-<h1>old</h1>", "+<h1>new</h1>", " <p>same</p>"}},
		{"write_file of a new file", permissions.AskRequest{Agent: "a", Role: permissions.Final, Tool: "write_file",
			Args: map[string]any{"path": page + ".new", "content": "hello\n"}, Paths: []string{page + ".new"}},
			[]string{"--- /dev/null", "+hello"}},
		{"edit_file", permissions.AskRequest{Agent: "a", Role: permissions.Final, Tool: "edit_file",
			Args: map[string]any{"path": page, "edits": []any{map[string]any{"oldText": "same", "newText": "changed"}}}, Paths: []string{page}},
			[]string{"-<p>same</p>", "+<p>changed</p>"}},
		{"execute_command", permissions.AskRequest{Agent: "a", Tool: "execute_command",
			Args: map[string]any{"command": "make deploy", "work_dir": dir}, Paths: []string{dir}},
			[]string{"command: make deploy", "paths: " + dir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			a := NewAsker(AskOptions{In: oneByteReader{strings.NewReader("1\n")}, Out: &out, Accessible: true})
			got, err := a.Ask(t.Context(), tt.req)
			if err != nil || got != permissions.AskDeny {
				t.Fatalf("Ask = %v, %v", got, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("prompt lacks %q:\n%s", w, out.String())
				}
			}
			if d := a.Denials(); len(d) != 1 || !strings.Contains(d[0], tt.req.Tool) {
				t.Errorf("Denials = %q", d)
			}
		})
	}
}

// TestAskCleansModelText: paths and content from a model cannot drive the terminal.
func TestAskCleansModelText(t *testing.T) {
	var out bytes.Buffer
	a := NewAsker(AskOptions{In: oneByteReader{strings.NewReader("\n")}, Out: &out, Accessible: true})
	req := permissions.AskRequest{Agent: "a", Tool: "write_file", Args: map[string]any{"path": "/x", "content": "\x1b]0;pwned\x07\x1b[2J\n"},
		Paths: []string{"/p\x1b[31mred"}}
	_, _ = a.Ask(t.Context(), req)
	for _, bad := range []string{"\x1b]0;", "\x1b[2J", "\x1b[31mred"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("output carries %q:\n%q", bad, out.String())
		}
	}
}
