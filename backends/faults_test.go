package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/lane"
)

// wireProtocol is one provider protocol, spoken by a fake server, for the fault tests.
type wireProtocol struct {
	name string
	cfg  configs.Backend // Type, Model; BaseURL is set per test
	// keyVar is the variable an authentication error must name.
	keyVar string
	// baseURL is the config's base_url for a server at url.
	baseURL func(url string) string
	// ok writes a complete reply whose text is "ok".
	ok func(s *rawSSE)
	// partial writes the start of a reply (text "par") without its end marker.
	partial func(s *rawSSE)
	// invalid writes a reply with an event that is not JSON at line invalidLine.
	invalid     func(s *rawSSE)
	invalidLine int
	// textEvent is one event carrying a piece of text, for an endless reply.
	textEvent string
	// errorBody is the provider's error document for an HTTP status.
	errorBody func(status int, msg string) string
}

// rawSSE writes server-sent event text as given, flushing after each write.
type rawSSE struct {
	w http.ResponseWriter
}

func (s *rawSSE) write(text string) {
	fmt.Fprint(s.w, text)
	s.w.(http.Flusher).Flush()
}

func startRawSSE(w http.ResponseWriter) *rawSSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	s := &rawSSE{w: w}
	s.w.(http.Flusher).Flush()
	return s
}

func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var (
	chatTextChunk = func(text string, finish any) string {
		return "data: " + jsonLine(chatChunk(map[string]any{"content": text}, finish)) + "\n\n"
	}
	respEvent = func(typ string, fields map[string]any) string {
		fields["type"] = typ
		return "event: " + typ + "\ndata: " + jsonLine(fields) + "\n\n"
	}
	claudeEvent = func(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }
	geminiChunk = func(text string, finish string) string {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		return "data: " + jsonLine(map[string]any{"candidates": []any{cand}}) + "\r\n\r\n"
	}
)

var wireProtocols = []wireProtocol{
	{
		name: "chat completions", cfg: configs.Backend{Type: "chatcompletion", Model: "m-test"}, keyVar: "OPENAI_API_KEY",
		baseURL: func(u string) string { return u + "/v1" },
		ok: func(s *rawSSE) {
			s.write(chatTextChunk("ok", nil))
			s.write(chatTextChunk("", "stop"))
			s.write("data: [DONE]\n\n")
		},
		partial: func(s *rawSSE) { s.write(chatTextChunk("par", nil)) },
		invalid: func(s *rawSSE) {
			s.write(chatTextChunk("par", nil))
			s.write("data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"delta\":{\"content\":\"a\nb\"}}]}\n\n")
		},
		invalidLine: 3,
		textEvent:   chatTextChunk("more ", nil),
		errorBody: func(status int, msg string) string {
			return jsonLine(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}})
		},
	},
	{
		name: "responses", cfg: configs.Backend{Type: "openai", Model: "gpt-test"}, keyVar: "OPENAI_API_KEY",
		baseURL: func(u string) string { return u + "/v1" },
		ok: func(s *rawSSE) {
			s.write(respEvent("response.created", map[string]any{"sequence_number": 0, "response": map[string]any{"id": "r", "status": "in_progress", "output": []any{}}}))
			s.write(respEvent("response.output_text.delta", map[string]any{"sequence_number": 1, "item_id": "m", "output_index": 0, "content_index": 0, "delta": "ok"}))
			s.write(respEvent("response.completed", map[string]any{"sequence_number": 2, "response": map[string]any{"id": "r", "status": "completed", "output": []any{},
				"usage": map[string]any{"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}}}))
		},
		partial: func(s *rawSSE) {
			s.write(respEvent("response.created", map[string]any{"sequence_number": 0, "response": map[string]any{"id": "r", "status": "in_progress", "output": []any{}}}))
			s.write(respEvent("response.output_text.delta", map[string]any{"sequence_number": 1, "item_id": "m", "output_index": 0, "content_index": 0, "delta": "par"}))
		},
		invalid: func(s *rawSSE) {
			s.write(respEvent("response.created", map[string]any{"sequence_number": 0, "response": map[string]any{"id": "r", "status": "in_progress", "output": []any{}}}))
			s.write("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":par}\n\n")
		},
		invalidLine: 5,
		textEvent:   respEvent("response.output_text.delta", map[string]any{"sequence_number": 1, "item_id": "m", "output_index": 0, "content_index": 0, "delta": "more "}),
		errorBody: func(status int, msg string) string {
			return jsonLine(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}})
		},
	},
	{
		name: "anthropic messages", cfg: configs.Backend{Type: "claude", Model: "claude-test"}, keyVar: "ANTHROPIC_API_KEY",
		baseURL: func(u string) string { return u },
		ok: func(s *rawSSE) {
			for _, e := range textOnlyReply {
				s.write(claudeEvent(e[0], strings.Replace(e[1], `"done"`, `"ok"`, 1)))
			}
		},
		partial: func(s *rawSSE) {
			s.write(claudeEvent("message_start", msgStart))
			s.write(claudeEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
			s.write(claudeEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}`))
		},
		invalid: func(s *rawSSE) {
			s.write(claudeEvent("message_start", msgStart))
			s.write(claudeEvent("ping", `{"type":"ping"}`)) // dropped by the SDK: the line must still be right
			s.write(claudeEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"}}`))
		},
		invalidLine: 8,
		textEvent:   claudeEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"more "}}`),
		errorBody: func(status int, msg string) string {
			return jsonLine(map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})
		},
	},
	{
		name: "gemini", cfg: configs.Backend{Type: "gemini", Model: "gemini-test"}, keyVar: "GEMINI_API_KEY or GOOGLE_API_KEY",
		baseURL: func(u string) string { return u },
		ok:      func(s *rawSSE) { s.write(geminiChunk("ok", "STOP")) },
		partial: func(s *rawSSE) { s.write(geminiChunk("par", "")) },
		invalid: func(s *rawSSE) {
			s.write(geminiChunk("par", ""))
			s.write("data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"x\ty\"}]}}]\r\n\r\n")
		},
		invalidLine: 3,
		textEvent:   geminiChunk("more ", ""),
		errorBody: func(status int, msg string) string {
			return jsonLine(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INTERNAL"}})
		},
	},
}

// faultServer is a fake provider whose every request is answered by handle (n counts from 0);
// it records when each request came.
type faultServer struct {
	*wireServer
	mu    sync.Mutex
	times []time.Time
}

func newFaultServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *faultServer {
	fs := &faultServer{}
	fs.wireServer = newWireServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		fs.mu.Lock()
		fs.times = append(fs.times, time.Now())
		fs.mu.Unlock()
		handle(w, r, n)
	})
	return fs
}

// says is how the error message of errorBody reads in an error.
func (p wireProtocol) says() string {
	if p.cfg.Type == "gemini" {
		return "something broke (INTERNAL)" // Gemini's status name is kept
	}
	return "something broke"
}

func (p wireProtocol) backend(t *testing.T, url string, o Options) Backend {
	t.Helper()
	cfg := p.cfg
	cfg.BaseURL = p.baseURL(url)
	o.LookupEnv = wireEnv(map[string]string{"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant", "GEMINI_API_KEY": "g-test"})
	if o.retryWait == nil {
		o.retryWait = fastRetry
	}
	b, err := New(cfg, o)
	if err != nil {
		t.Fatalf("New(%s): %v", p.name, err)
	}
	return b
}

// cut sends the start of a reply and drops the connection. chunked: the body is chunked (it
// lacks its last chunk); else it announces a Content-Length it never reaches.
func cut(t *testing.T, w http.ResponseWriter, p wireProtocol, chunked bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	if !chunked {
		w.Header().Set("Content-Length", "100000")
	}
	w.WriteHeader(http.StatusOK)
	p.partial(&rawSSE{w: w})
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

func errorAnswer(w http.ResponseWriter, p wireProtocol, status int, headers map[string]string) {
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, p.errorBody(status, "something broke"))
}

var hi = Request{Messages: []Message{{Role: "user", Content: "hi"}}}

// Every fault the issue lists, against every protocol: a transient fault is retried and the
// reply that follows is the answer; a fault that stays ends the call with an error in words
// that keeps its cause.
func TestWireFaultsRecover(t *testing.T) {
	faults := []struct {
		name  string
		first func(t *testing.T, w http.ResponseWriter, p wireProtocol)
		// retryText must be in the retry event's text.
		retryText string
	}{
		{"500 then success", func(t *testing.T, w http.ResponseWriter, p wireProtocol) { errorAnswer(w, p, 500, nil) }, "HTTP 500"},
		{"stream cut with chunked encoding", func(t *testing.T, w http.ResponseWriter, p wireProtocol) { cut(t, w, p, true) }, "the connection was cut"},
		{"stream cut without chunked encoding", func(t *testing.T, w http.ResponseWriter, p wireProtocol) { cut(t, w, p, false) }, "the connection was cut"},
		{"clean close without end marker", func(t *testing.T, w http.ResponseWriter, p wireProtocol) { p.partial(startRawSSE(w)) }, "the stream closed before"},
		{"invalid JSON", func(t *testing.T, w http.ResponseWriter, p wireProtocol) { p.invalid(startRawSSE(w)) }, "not valid JSON"},
	}
	for _, p := range wireProtocols {
		for _, f := range faults {
			t.Run(p.name+"/"+f.name, func(t *testing.T) {
				fs := newFaultServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
					if n == 0 {
						f.first(t, w, p)
						return
					}
					p.ok(startRawSSE(w))
				})
				var log wireEvents
				resp, err := p.backend(t, fs.URL, Options{}).Generate(testContext(t), hi, log.add)
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if resp.Text != "ok" {
					t.Errorf("text = %q, want the second attempt's %q", resp.Text, "ok")
				}
				if n := len(fs.requests()); n != 2 {
					t.Errorf("requests = %d, want 2", n)
				}
				retries := log.kinds(EventRetry)
				if len(retries) != 1 || !strings.Contains(retries[0].Text, f.retryText) {
					t.Errorf("retry events = %+v, want one saying %q", retries, f.retryText)
				}
				// What streams after the retry event is the reply.
				var after strings.Builder
				for _, e := range log.events {
					switch e.Kind {
					case EventRetry:
						after.Reset()
					case EventTextDelta:
						after.WriteString(e.Text)
					}
				}
				if after.String() != "ok" {
					t.Errorf("text streamed after the retry = %q", after.String())
				}
			})
		}
	}
}

func TestWireFaultsFinal(t *testing.T) {
	faults := []struct {
		name   string
		answer func(t *testing.T, w http.ResponseWriter, p wireProtocol)
		// want is the message after "<provider> <model>: ".
		want     func(p wireProtocol) string
		requests int
		kind     ErrorKind
	}{
		{"reply ended early on every attempt", func(t *testing.T, w http.ResponseWriter, p wireProtocol) { p.partial(startRawSSE(w)) },
			func(p wireProtocol) string {
				marker := map[string]string{"chatcompletion": "finish_reason or [DONE]", "openai": "response.completed", "claude": "message_stop", "gemini": "a finish reason"}[p.cfg.Type]
				return "the reply ended early: the stream closed before " + marker + " after 2 retries"
			}, 3, KindEndedEarly},
		{"connection cut on every attempt", func(t *testing.T, w http.ResponseWriter, p wireProtocol) { cut(t, w, p, true) },
			func(p wireProtocol) string {
				marker := map[string]string{"chatcompletion": "finish_reason or [DONE]", "openai": "response.completed", "claude": "message_stop", "gemini": "a finish reason"}[p.cfg.Type]
				return "the reply ended early: the connection was cut before " + marker + " (unexpected EOF) after 2 retries"
			}, 3, KindEndedEarly},
		{"invalid JSON on every attempt", func(t *testing.T, w http.ResponseWriter, p wireProtocol) { p.invalid(startRawSSE(w)) },
			func(p wireProtocol) string {
				return "the provider sent a reply that is not valid JSON (line " + strconv.Itoa(p.invalidLine) + " of the stream) after 2 retries"
			}, 3, KindInvalidReply},
		{"429 on every attempt", func(t *testing.T, w http.ResponseWriter, p wireProtocol) {
			errorAnswer(w, p, 429, map[string]string{"Retry-After": "0"})
		}, func(p wireProtocol) string {
			return "rate limited (HTTP 429) after 2 retries; the provider says: " + p.says()
		}, 3, KindRateLimited},
		{"a reply that is not a stream", func(t *testing.T, w http.ResponseWriter, p wireProtocol) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
		}, func(p wireProtocol) string {
			return "the provider did not stream its reply (it answered with Content-Type application/json)"
		}, 1, KindInvalidReply},
		{"401 is not retried", func(t *testing.T, w http.ResponseWriter, p wireProtocol) { errorAnswer(w, p, 401, nil) },
			func(p wireProtocol) string {
				return "authentication failed (HTTP 401): check " + p.keyVar + "; the provider says: " + p.says()
			}, 1, KindAuth},
	}
	for _, p := range wireProtocols {
		for _, f := range faults {
			t.Run(p.name+"/"+f.name, func(t *testing.T) {
				fs := newFaultServer(t, func(w http.ResponseWriter, r *http.Request, n int) { f.answer(t, w, p) })
				b := p.backend(t, fs.URL, Options{MaxRetries: 2})
				_, err := b.Generate(testContext(t), hi, nil)
				want := b.Provider() + " " + b.Model() + ": " + f.want(p)
				if err == nil || err.Error() != want {
					t.Fatalf("err = %v\nwant  %s", err, want)
				}
				var e *Error
				if !errors.As(err, &e) || e.Kind != f.kind || e.Retries != f.requests-1 {
					t.Errorf("err = %#v, want kind %d after %d retries", e, f.kind, f.requests-1)
				}
				if errors.Is(err, ErrEndedEarly) != (f.kind == KindEndedEarly) {
					t.Errorf("errors.Is(err, ErrEndedEarly) = %v", errors.Is(err, ErrEndedEarly))
				}
				if errors.Unwrap(err) == nil {
					t.Error("the cause is not kept for the logs")
				}
				if strings.Contains(err.Error(), "invalid character") {
					t.Errorf("a raw decoder error in the message: %v", err)
				}
				if strings.HasPrefix(f.name, "invalid JSON") {
					var se *json.SyntaxError
					if !errors.As(err, &se) {
						t.Errorf("the decoder error is not in the chain: %v", errors.Unwrap(err))
					}
				}
				if n := len(fs.requests()); n != f.requests {
					t.Errorf("requests = %d, want %d", n, f.requests)
				}
			})
		}
	}
}

// A 429 with Retry-After is retried after the time the provider asked for.
func TestWireRetryAfterIsHonoured(t *testing.T) {
	lane.Long(t)
	for _, p := range wireProtocols {
		t.Run(p.name, func(t *testing.T) {
			fs := newFaultServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					errorAnswer(w, p, 429, map[string]string{"Retry-After": "1"})
					return
				}
				p.ok(startRawSSE(w))
			})
			// retryWait would be used without the header: make it obvious.
			b := p.backend(t, fs.URL, Options{retryWait: func(int) time.Duration { return time.Millisecond }})
			var log wireEvents
			resp, err := b.Generate(testContext(t), hi, log.add)
			if err != nil || resp.Text != "ok" {
				t.Fatalf("resp = %+v, err = %v", resp, err)
			}
			fs.mu.Lock()
			gap := fs.times[1].Sub(fs.times[0])
			fs.mu.Unlock()
			if gap < 900*time.Millisecond {
				t.Errorf("retried after %v, want the 1s Retry-After", gap)
			}
			if r := log.kinds(EventRetry); len(r) != 1 || !strings.Contains(r[0].Text, "rate limited (HTTP 429)") || !strings.Contains(r[0].Text, "in 1s") {
				t.Errorf("retry events = %+v", r)
			}
		})
	}
}

// An endless reply ends when the context does: promptly, with the context's error, and
// without another attempt.
func TestWireEndlessStreamCancelled(t *testing.T) {
	for _, p := range wireProtocols {
		t.Run(p.name, func(t *testing.T) {
			fs := newFaultServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				s := startRawSSE(w)
				if p.cfg.Type == "claude" {
					s.write(claudeEvent("message_start", msgStart))
					s.write(claudeEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
				}
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-r.Context().Done():
						return
					case <-tick.C:
						s.write(p.textEvent)
					}
				}
			})
			ctx, cancel := context.WithTimeout(testContext(t), 300*time.Millisecond)
			defer cancel()
			var log wireEvents
			_, err := p.backend(t, fs.URL, Options{}).Generate(ctx, hi, log.add)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the deadline", err)
			}
			if len(log.kinds(EventTextDelta)) == 0 {
				t.Error("no text arrived before the deadline: the stream was not endless")
			}
			if n := len(fs.requests()); n != 1 || len(log.kinds(EventRetry)) != 0 {
				t.Errorf("requests = %d, retries %d: a cancelled call was retried", n, len(log.kinds(EventRetry)))
			}
		})
	}
}

// A Chat Completions stream whose chunks never carry a choice is an empty reply, not an answer.
func TestChatCompletionEmptyChoices(t *testing.T) {
	fs := newFaultServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		s := startRawSSE(w)
		s.write("data: " + jsonLine(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{}}) + "\n\n")
		s.write("data: " + jsonLine(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 0, "total_tokens": 3}}) + "\n\n")
		s.write("data: [DONE]\n\n")
	})
	p := wireProtocols[0]
	_, err := p.backend(t, fs.URL, Options{MaxRetries: 1}).Generate(testContext(t), hi, nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindEmptyReply || err.Error() != "chatcompletion m-test: the provider sent an empty reply (no choices) after 1 retry" {
		t.Fatalf("err = %v", err)
	}
	if n := len(fs.requests()); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

// [DONE] alone ends a reply (some servers send no finish_reason), and so does a finish_reason
// alone (some send no [DONE]).
func TestChatCompletionEitherEndMarker(t *testing.T) {
	for name, write := range map[string]func(s *rawSSE){
		"[DONE] without finish_reason": func(s *rawSSE) { s.write(chatTextChunk("ok", nil)); s.write("data: [DONE]\n\n") },
		"finish_reason without [DONE]": func(s *rawSSE) { s.write(chatTextChunk("ok", "stop")) },
	} {
		t.Run(name, func(t *testing.T) {
			fs := newFaultServer(t, func(w http.ResponseWriter, r *http.Request, n int) { write(startRawSSE(w)) })
			resp, err := wireProtocols[0].backend(t, fs.URL, Options{}).Generate(testContext(t), hi, nil)
			if err != nil || resp.Text != "ok" || len(fs.requests()) != 1 {
				t.Fatalf("resp = %+v, err = %v, requests = %d", resp, err, len(fs.requests()))
			}
		})
	}
}

// A provider that cannot be reached, or that drops the connection before answering: retried,
// then an error naming the host and the cause.
func TestWireConnectionFailures(t *testing.T) {
	for _, p := range wireProtocols {
		t.Run(p.name+"/refused", func(t *testing.T) {
			fs := newFaultServer(t, func(w http.ResponseWriter, r *http.Request, n int) {})
			url := fs.URL
			fs.Close() // nothing listens there any more
			b := p.backend(t, url, Options{MaxRetries: 1})
			_, err := b.Generate(testContext(t), hi, nil)
			host := strings.TrimPrefix(url, "http://")
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindNetwork || e.Retries != 1 ||
				!strings.HasPrefix(e.Message, "the connection to "+host+" failed (") || !strings.HasSuffix(e.Message, ") after 1 retry") {
				t.Fatalf("err = %v", err)
			}
		})
		t.Run(p.name+"/dropped before answering", func(t *testing.T) {
			fs := newFaultServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				p.ok(startRawSSE(w))
			})
			var log wireEvents
			resp, err := p.backend(t, fs.URL, Options{}).Generate(testContext(t), hi, log.add)
			if err != nil || resp.Text != "ok" {
				t.Fatalf("resp = %+v, err = %v", resp, err)
			}
			if r := log.kinds(EventRetry); len(r) != 1 || !strings.Contains(r[0].Text, "the connection to ") {
				t.Errorf("retry events = %+v", r)
			}
		})
	}
}
