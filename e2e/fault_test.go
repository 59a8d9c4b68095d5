package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fault may answer a request in a broken way instead of the scripted model: n is the 1-based
// count of requests for that model. It returns false to let the model answer.
type fault func(w http.ResponseWriter, r *http.Request, n int) bool

// newFaultyProvider is newProvider whose models may be broken by faults; it records when each
// request arrived.
func newFaultyProvider(t *testing.T, scripts map[string]func(turn) reply, faults map[string]fault) (*provider, *arrivals) {
	p := &provider{t: t, scripts: scripts, reqs: map[string][][]byte{}}
	arr := &arrivals{at: map[string][]time.Time{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal(body, &req)
		n := arr.add(req.Model)
		if f := faults[req.Model]; f != nil && f(w, r, n) {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.handle(w, r)
	}))
	t.Cleanup(p.Close)
	return p, arr
}

type arrivals struct {
	mu sync.Mutex
	at map[string][]time.Time
}

func (a *arrivals) add(model string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.at[model] = append(a.at[model], time.Now())
	return len(a.at[model])
}

func (a *arrivals) get(model string) []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time(nil), a.at[model]...)
}

// firstN applies f to the first n requests only (n < 0: to every request).
func firstN(n int, f func(w http.ResponseWriter, r *http.Request)) fault {
	return func(w http.ResponseWriter, r *http.Request, i int) bool {
		if n >= 0 && i > n {
			return false
		}
		f(w, r)
		return true
	}
}

func sseHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

func sseChunk(w http.ResponseWriter, content string) {
	b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "fake",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": nil}}})
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

// The broken replies, as a provider (or the network) sends them.
var (
	status500 = func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"internal error","type":"server_error"}}`, http.StatusInternalServerError)
	}
	rateLimited = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":{"message":"slow down","type":"rate_limit"}}`, http.StatusTooManyRequests)
	}
	// cutChunked drops the connection in the middle of a chunked stream.
	cutChunked = func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		sseChunk(w, "Half of an ans")
		panic(http.ErrAbortHandler)
	}
	// cutLength drops the connection before the announced Content-Length arrived.
	cutLength = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		sseHeader(w)
		sseChunk(w, "Half of an ans")
		panic(http.ErrAbortHandler)
	}
	// cleanNoEnd closes the stream cleanly with neither finish_reason nor [DONE].
	cleanNoEnd = func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		sseChunk(w, "Half of an ans")
	}
	invalidJSON = func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		fmt.Fprint(w, "data: {\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"a\n\n")
	}
	emptyChoices = func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		fmt.Fprint(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake\",\"choices\":[]}\n\ndata: [DONE]\n\n")
	}
	// endless streams a word every 50 ms until the client goes away.
	endless = func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
				sseChunk(w, "more ")
			}
		}
	}
)

// soloScript answers, then presents.
func soloScript(final string) func(turn) reply {
	return func(tr turn) reply {
		if tr.final {
			return reply{text: final}
		}
		return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "the answer"})}}
	}
}

// faultConfig is a config of agents {id, model} on p, with orchestrator extras.
func faultConfig(p *provider, extra string, agents ...[2]string) string {
	var b strings.Builder
	b.WriteString("agents:\n")
	for i, a := range agents {
		b.WriteString(agentYAML(a[0], a[1], p.URL(), fmt.Sprintf("workspace%d", i+1)))
	}
	b.WriteString("orchestrator:\n  timeout_seconds: 90\n" + extra)
	return b.String()
}

func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// A model call that fails once is retried and the run succeeds; one that fails every time
// stops the agent, named with the cause in one sentence as the run's last line, exit 1.
func TestBackendFaults(t *testing.T) {
	tests := []struct {
		name      string
		fault     func(w http.ResponseWriter, r *http.Request)
		wantCause string // in the Failed line when every attempt fails
	}{
		{"HTTP 500", status500, "HTTP 500"},
		{"429 with Retry-After", rateLimited, "429"},
		{"stream cut (chunked)", cutChunked, "the reply ended early"},
		{"stream cut (Content-Length)", cutLength, "the reply ended early"},
		{"clean close without end marker", cleanNoEnd, "the reply ended early"},
		{"invalid JSON", invalidJSON, "not valid JSON"},
		{"empty choices", emptyChoices, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name+" once", func(t *testing.T) {
			dir := t.TempDir()
			p, arr := newFaultyProvider(t, map[string]func(turn) reply{"m": soloScript("presented")}, map[string]fault{"m": firstN(1, tt.fault)})
			writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", [2]string{"solo", "m"}))
			res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "Answer")
			if res.code != 0 || res.stdout != "presented\n" {
				t.Fatalf("exit %d, stdout %q\n%s", res.code, res.stdout, res.stderr)
			}
			at := arr.get("m")
			if len(at) != 3 { // the broken call, its retry, the presentation
				t.Errorf("%d requests, want 3", len(at))
			}
			if tt.name == "429 with Retry-After" && len(at) > 1 && at[1].Sub(at[0]) < 900*time.Millisecond {
				t.Errorf("retried after %s, before the 1 s the server asked for", at[1].Sub(at[0]))
			}
			if !strings.Contains(res.stderr, "retrying") {
				t.Errorf("no retry shown:\n%s", res.stderr)
			}
		})
		t.Run(tt.name+" always", func(t *testing.T) {
			dir := t.TempDir()
			p, _ := newFaultyProvider(t, map[string]func(turn) reply{"m": soloScript("presented")}, map[string]fault{"m": firstN(-1, tt.fault)})
			writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, "", [2]string{"solo", "m"}))
			res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "Answer")
			if res.code != 1 || res.stdout != "" {
				t.Fatalf("exit %d, stdout %q\n%s", res.code, res.stdout, res.stderr)
			}
			last := lastLines(res.stderr, 1)[0]
			if !strings.HasPrefix(last, "Failed: agent solo: ") || !strings.Contains(last, tt.wantCause) {
				t.Errorf("last line %q, want the agent and %q", last, tt.wantCause)
			}
			if n := strings.Count(res.stderr, "no agent produced an answer"); n != 1 {
				t.Errorf("%q said %d times:\n%s", "no agent produced an answer", n, res.stderr)
			}
			for _, raw := range []string{"invalid character", "unexpected EOF"} {
				if strings.Contains(last, raw) && !strings.Contains(last, "(") {
					t.Errorf("raw decoder error in %q", last)
				}
			}
			t.Logf("%s", res.stderr)
		})
	}
}

// healthyScript answers, votes for the first answer, and presents.
func healthyScript(final string) func(turn) reply {
	return func(tr turn) reply {
		switch {
		case tr.final:
			return reply{text: final}
		case len(tr.answers) == 0:
			return reply{calls: []toolCall{tc("new_answer", map[string]any{"content": "the healthy answer"})}}
		default:
			return reply{calls: []toolCall{tc("vote", map[string]any{"agent_id": tr.answers[0], "reason": "it works"})}}
		}
	}
}

// One broken agent among two: the healthy agent's answer is presented, the broken agent is named
// with its cause in the run's last line, and the exit code says partial (4). An endless stream
// is ended by the agent timeout.
func TestOneBrokenAgentAmongTwo(t *testing.T) {
	tests := []struct {
		name, extra string
		fault       func(w http.ResponseWriter, r *http.Request)
		wantCause   string
	}{
		{"HTTP 500 every time", "", status500, "backend error: chatcompletion broken-model: the provider failed (HTTP 500 Internal Server Error) after 3 retries"},
		{"endless stream, agent timeout", "  agent_timeout_seconds: 3\n", endless, "agent timeout (3s) reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p, _ := newFaultyProvider(t, map[string]func(turn) reply{"ok-model": healthyScript("healthy presented")},
				map[string]fault{"broken-model": firstN(-1, tt.fault)})
			writeFile(t, filepath.Join(dir, "cfg.yaml"), faultConfig(p, tt.extra, [2]string{"healthy", "ok-model"}, [2]string{"broken", "broken-model"}))
			started := time.Now()
			res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "Answer")
			if res.code != 4 || res.stdout != "healthy presented\n" {
				t.Fatalf("exit %d, stdout %q, want 4 and the healthy answer\n%s", res.code, res.stdout, res.stderr)
			}
			if last := lastLines(res.stderr, 1)[0]; !strings.HasPrefix(last, "Failed: agent broken: "+tt.wantCause) {
				t.Errorf("last line %q, want the broken agent and %q", last, tt.wantCause)
			}
			if n := strings.Count(res.stderr, "Failed: "); n != 1 {
				t.Errorf("%d Failed lines:\n%s", n, res.stderr)
			}
			if elapsed := time.Since(started); elapsed > time.Minute {
				t.Errorf("took %s", elapsed)
			}
		})
	}
}

// The overall timeout ends coordination with the best answer so far presented: exit 3.
func TestOverallTimeoutExits3(t *testing.T) {
	dir := t.TempDir()
	p := newProvider(t, map[string]func(turn) reply{
		"fast": healthyScript("best so far"),
		"slow": func(tr turn) reply { return reply{block: true} },
	})
	writeFile(t, filepath.Join(dir, "cfg.yaml"), "agents:\n"+agentYAML("fast", "fast", p.URL(), "w1")+agentYAML("slow", "slow", p.URL(), "w2")+
		"orchestrator:\n  timeout_seconds: 3\n")
	res := run(t, dir, "--config", "cfg.yaml", "--display", "plain", "Answer")
	if res.code != 3 || res.stdout != "best so far\n" {
		t.Fatalf("exit %d, stdout %q, want 3 and the best answer\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "Ended early: the overall timeout") {
		t.Errorf("stderr:\n%s", res.stderr)
	}
}
