package backends

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

func newTestGeminiModel(t *testing.T, url, model string, extra map[string]any) Backend {
	t.Helper()
	b, err := New(configs.Backend{Type: "gemini", Model: model, BaseURL: url, APIKey: "g-test", Extra: extra}, Options{retryWait: fastRetry})
	if err != nil {
		t.Fatalf("New(gemini): %v", err)
	}
	return b
}

// A grounded reply that ran code: executableCode and codeExecutionResult parts, text, and the
// grounding chunks of the search.
var geminiBuiltinReply = geminiScript{
	`{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(6*7)"}}],"role":"model"},"index":0}]}`,
	`{"candidates":[{"content":{"parts":[{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"42\n"}}],"role":"model"},"index":0}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"It is 42, says Go 1.26."}],"role":"model"},"finishReason":"STOP","index":0,` +
		`"groundingMetadata":{"webSearchQueries":["go 1.26"],"groundingChunks":[{"web":{"uri":"https://go.dev/doc/go1.26","title":"go.dev"}},{"web":{"uri":"https://go.dev/doc/go1.26","title":"go.dev"}}]}}],` +
		`"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":9,"toolUsePromptTokenCount":4}}`,
}

const geminiBuiltinText = "\n\n```python\nprint(6*7)\n```\n" +
	"\n\nCode execution output:\n```\n42\n```\n" +
	"It is 42, says Go 1.26." +
	"\n\nSources:\n1. go.dev - https://go.dev/doc/go1.26\n"

// Gemini 3 models take the built-in tools next to our function declarations, with
// includeServerSideToolInvocations; code, output and sources reach the answer.
func TestGeminiBuiltinToolsCombined(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		geminiBuiltinReply.play(w)
	}))
	defer srv.Close()
	b := newTestGeminiModel(t, srv.URL, "gemini-3-pro-preview", map[string]any{"enable_web_search": true, "enable_code_execution": true})
	var log wireEvents
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "6*7?"}}, Tools: []ToolSpec{testWriteFileTool}}, log.add)
	if err != nil {
		t.Fatal(err)
	}
	body := rec.last()
	tools := body["tools"].([]any)
	if len(tools) != 3 || wireDig(tools[0], "functionDeclarations", 0, "name") != "write_file" ||
		mustJSON(t, tools[1]) != `{"googleSearch":{}}` || mustJSON(t, tools[2]) != `{"codeExecution":{}}` {
		t.Errorf("tools = %s", mustJSON(t, tools))
	}
	if got := wireDig(body, "toolConfig", "includeServerSideToolInvocations"); got != true {
		t.Errorf("toolConfig = %s", mustJSON(t, body["toolConfig"]))
	}
	if resp.Text != geminiBuiltinText || log.text() != resp.Text {
		t.Errorf("text =\n%q\nstreamed\n%q\nwant\n%q", resp.Text, log.text(), geminiBuiltinText)
	}
	if resp.Usage.InputTokens != 14 {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

// Without function declarations (a request offering no tools), any model gets the built-in
// tools as they are.
func TestGeminiBuiltinToolsAlone(t *testing.T) {
	var rec bodyRecorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(t, r)
		geminiBuiltinReply.play(w)
	}))
	defer srv.Close()
	b := newTestGeminiModel(t, srv.URL, "gemini-2.5-flash", map[string]any{"enable_web_search": true, "enable_code_execution": true})
	resp, err := b.Generate(testContext(t), Request{Messages: []Message{{Role: "user", Content: "6*7?"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, rec.last()["tools"]); got != `[{"googleSearch":{}},{"codeExecution":{}}]` {
		t.Errorf("tools = %s", got)
	}
	if _, ok := rec.last()["toolConfig"]; ok {
		t.Errorf("toolConfig sent: %s", mustJSON(t, rec.last()["toolConfig"]))
	}
	if resp.Text != geminiBuiltinText {
		t.Errorf("text = %q", resp.Text)
	}
}

// geminiProxyServer answers the requests of a model that cannot combine built-in tools with
// function declarations: the built-in tools' own requests (recognised by their tools), and the
// main conversation, turn by turn.
type geminiProxyServer struct {
	t    *testing.T
	mu   sync.Mutex
	main []map[string]any // bodies of the main requests
	subs []map[string]any // bodies of the built-in tools' requests
	// replies are the main conversation's replies, in order.
	replies []geminiScript
}

func (g *geminiProxyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var rec bodyRecorder
	body := rec.record(g.t, r)
	tools := mustJSON(g.t, body["tools"])
	g.mu.Lock()
	defer g.mu.Unlock()
	switch tools {
	case `[{"googleSearch":{}}]`:
		g.subs = append(g.subs, body)
		geminiScript{`{"candidates":[{"content":{"parts":[{"text":"Go 1.26 came out in February."}],"role":"model"},"finishReason":"STOP","index":0,` +
			`"groundingMetadata":{"groundingChunks":[{"web":{"uri":"https://go.dev/doc/go1.26","title":"go.dev"}}]}}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":6}}`}.play(w)
	case `[{"codeExecution":{}}]`:
		g.subs = append(g.subs, body)
		geminiScript{
			`{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(6*7)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"42\n"}}],"role":"model"},"index":0}]}`,
			`{"candidates":[{"content":{"parts":[{"text":"The output is 42."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":3}}`,
		}.play(w)
	default:
		n := len(g.main)
		g.main = append(g.main, body)
		if n >= len(g.replies) {
			g.t.Errorf("unexpected main request %d", n+1)
			geminiTextOnly.play(w)
			return
		}
		g.replies[n].play(w)
	}
}

const geminiCallsSearchAndCode = `{"candidates":[{"content":{"parts":[` +
	`{"functionCall":{"id":"c1","name":"google_search","args":{"query":"go 1.26 release"}},"thoughtSignature":"c2ln"},` +
	`{"functionCall":{"id":"c2","name":"code_execution","args":{"code":"print(6*7)"}}}],"role":"model"},"finishReason":"STOP","index":0}],` +
	`"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":8}}`

// Gemini 2.5 refuses built-in tools next to function declarations, so the backend offers them
// as functions and answers their calls with requests of their own that use only the built-in
// tool; the model then goes on with the results.
func TestGeminiBuiltinToolsAsFunctions(t *testing.T) {
	g := &geminiProxyServer{t: t, replies: []geminiScript{
		{geminiCallsSearchAndCode},
		{`{"candidates":[{"content":{"parts":[{"text":"Done."},{"functionCall":{"id":"c3","name":"write_file","args":{"path":"a.txt","content":"42"}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":4}}`},
		geminiTextOnly,
	}}
	srv := httptest.NewServer(g)
	defer srv.Close()
	b := newTestGeminiModel(t, srv.URL, "gemini-2.5-flash", map[string]any{"enable_web_search": true, "enable_code_execution": true})
	var log wireEvents
	msgs := []Message{{Role: "user", Content: "what's new, and 6*7?"}}
	resp, err := b.Generate(testContext(t), Request{Messages: msgs, Tools: []ToolSpec{testWriteFileTool}}, log.add)
	if err != nil {
		t.Fatal(err)
	}

	// The first request offers the built-in tools as functions, and no built-in tool.
	var names []string
	for _, d := range wireDig(g.main[0], "tools", 0, "functionDeclarations").([]any) {
		names = append(names, d.(map[string]any)["name"].(string))
	}
	if strings.Join(names, " ") != "write_file code_execution google_search" && strings.Join(names, " ") != "write_file google_search code_execution" {
		t.Errorf("function declarations = %v", names)
	}
	if got := mustJSON(t, g.main[0]["tools"]); strings.Contains(got, "googleSearch") || strings.Contains(got, "codeExecution") {
		t.Errorf("built-in tools sent with function declarations: %s", got)
	}
	// Their calls became requests of their own.
	if len(g.subs) != 2 {
		t.Fatalf("built-in tool requests = %d, want 2", len(g.subs))
	}
	for _, sub := range g.subs {
		prompt := wireDig(sub, "contents", 0, "parts", 0, "text").(string)
		if !strings.Contains(prompt, "go 1.26 release") && !strings.Contains(prompt, "print(6*7)") {
			t.Errorf("built-in tool request prompt = %q", prompt)
		}
		if _, ok := sub["systemInstruction"]; ok {
			t.Errorf("the agent's system prompt went to a built-in tool request")
		}
	}
	// The second main request carries the model's calls and their answers.
	contents := g.main[1]["contents"].([]any)
	if len(contents) != 3 || wireDig(contents[1], "role") != "model" || wireDig(contents[1], "parts", 0, "thoughtSignature") != "c2ln" {
		t.Fatalf("contents = %s", mustJSON(t, contents))
	}
	answers := map[string]string{}
	for _, p := range wireDig(contents[2], "parts").([]any) {
		fr := p.(map[string]any)["functionResponse"].(map[string]any)
		answers[fr["name"].(string)] = wireDig(fr, "response", "output").(string)
	}
	if !strings.Contains(answers["google_search"], "Go 1.26 came out in February.") || !strings.Contains(answers["google_search"], "https://go.dev/doc/go1.26") {
		t.Errorf("search answer = %q", answers["google_search"])
	}
	if !strings.Contains(answers["code_execution"], "42") {
		t.Errorf("code answer = %q", answers["code_execution"])
	}

	// The answer has the code run, its output, the text and the sources.
	want := "\n\n```python\nprint(6*7)\n```\n\n\nCode execution output:\n```\n42\n```\nDone.\n\nSources:\n1. go.dev - https://go.dev/doc/go1.26\n"
	if resp.Text != want || log.text() != want {
		t.Errorf("text =\n%q\nstreamed\n%q\nwant\n%q", resp.Text, log.text(), want)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "write_file" {
		t.Fatalf("tool calls = %+v: only our tools are returned", resp.ToolCalls)
	}
	if resp.Usage.InputTokens != 20+40+5+7 {
		t.Errorf("usage = %+v, want every request's", resp.Usage)
	}

	// The next call sends the whole exchange back: both model turns and the answers.
	msgs = append(msgs, Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls},
		Message{Role: "tool", ToolCallID: resp.ToolCalls[0].ID, ToolName: "write_file", Content: "wrote a.txt"})
	if _, err := b.Generate(testContext(t), Request{Messages: msgs, Tools: []ToolSpec{testWriteFileTool}}, nil); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, c := range g.main[2]["contents"].([]any) {
		roles = append(roles, c.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, " ") != "user model user model user" {
		t.Errorf("roles = %v", roles)
	}
	if got := wireDig(g.main[2], "contents", 4, "parts", 0, "functionResponse", "name"); got != "write_file" {
		t.Errorf("last turn = %s", mustJSON(t, wireDig(g.main[2], "contents", 4)))
	}
}

// A reply that calls a built-in tool and one of ours at once: ours is returned, and the
// built-in tool's answer goes back with our tool's result.
func TestGeminiBuiltinToolCallNextToOurs(t *testing.T) {
	g := &geminiProxyServer{t: t, replies: []geminiScript{
		{`{"candidates":[{"content":{"parts":[{"functionCall":{"id":"c1","name":"google_search","args":{"query":"q"}}},{"functionCall":{"id":"c2","name":"write_file","args":{"path":"a","content":"b"}}}],"role":"model"},"finishReason":"STOP","index":0}]}`},
		geminiTextOnly,
	}}
	srv := httptest.NewServer(g)
	defer srv.Close()
	b := newTestGeminiModel(t, srv.URL, "gemini-2.5-pro", map[string]any{"enable_web_search": true})
	msgs := []Message{{Role: "user", Content: "go"}}
	resp, err := b.Generate(testContext(t), Request{Messages: msgs, Tools: []ToolSpec{testWriteFileTool}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "write_file" || len(g.main) != 1 || len(g.subs) != 1 {
		t.Fatalf("resp = %+v, main %d, subs %d", resp, len(g.main), len(g.subs))
	}
	msgs = append(msgs, Message{Role: "assistant", ToolCalls: resp.ToolCalls},
		Message{Role: "tool", ToolCallID: "c2", ToolName: "write_file", Content: "ok"})
	if _, err := b.Generate(testContext(t), Request{Messages: msgs, Tools: []ToolSpec{testWriteFileTool}}, nil); err != nil {
		t.Fatal(err)
	}
	last := wireDig(g.main[1], "contents", 2)
	var got []string
	for _, p := range wireDig(last, "parts").([]any) {
		got = append(got, wireDig(p, "functionResponse", "name").(string))
	}
	if wireDig(last, "role") != "user" || strings.Join(got, " ") != "google_search write_file" {
		t.Errorf("answers turn = %s", mustJSON(t, last))
	}
}

func TestGeminiCombinesTools(t *testing.T) {
	for model, want := range map[string]bool{
		"gemini-3-pro-preview": true, "gemini-3.1-flash": true, "models/gemini-3-flash": true, "gemini-10-ultra": true,
		"gemini-2.5-flash": false, "gemini-2.0-flash": false, "gemini-flash-latest": false, "gemini-test": false, "learnlm-2.0": false,
	} {
		if got := geminiCombinesTools(model); got != want {
			t.Errorf("geminiCombinesTools(%q) = %v, want %v", model, got, want)
		}
	}
}
