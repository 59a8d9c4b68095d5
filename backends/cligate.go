package backends

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
)

// The model gate stands between a CLI that does not report the tools it offers (codex,
// gemini) and its model provider. The CLI is pointed at the gate (a loopback HTTP server, for
// the duration of one CLI run) with a token of the gate's instead of the API key; the gate
// reads every request, refuses one that offers the model any tool but massgen's (the bridge's),
// and forwards the others to the provider with the real key. So whatever a CLI version adds to
// its tool list, the model is never offered it, and the CLI never holds the key.

// cliGateConfig is where a gate forwards to and how.
type cliGateConfig struct {
	protocol string // "responses" (OpenAI Responses: codex) or "gemini" (generateContent)
	upstream string // the provider's base URL; a request's path is appended
	key      string // the provider's API key
	// client sends the forwarded requests (nil: one honouring the proxy settings).
	client *http.Client
}

// cliGate is one gate, for one CLI run.
type cliGate struct {
	url     string // http://127.0.0.1:PORT
	token   string // what the CLI must present as its key
	refused chan error
	strays  chan ccUse // calls of tools that are not massgen's, seen in the conversation sent
	srv     *http.Server
	allowed map[string]bool // massgen's tool names
	cfg     cliGateConfig
	target  *url.URL
	log     *zap.Logger
}

// cliGateMaxBody bounds a request the gate reads (a conversation with large tool results).
const cliGateMaxBody = 64 << 20

func newCLIGate(cfg cliGateConfig, tools []ToolSpec, log *zap.Logger) (*cliGate, error) {
	target, err := url.Parse(strings.TrimSuffix(cfg.upstream, "/"))
	if err != nil || target.Scheme == "" || target.Host == "" {
		return nil, fmt.Errorf("model gate: base URL %q is not an absolute URL", cfg.upstream)
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("model gate: %w", err)
	}
	g := &cliGate{
		url: "http://" + ln.Addr().String(), token: hex.EncodeToString(tok), refused: make(chan error, 1), strays: make(chan ccUse, 64),
		allowed: map[string]bool{}, cfg: cfg, target: target, log: log,
	}
	for _, t := range tools {
		g.allowed[t.Name] = true
	}
	if g.cfg.client == nil {
		g.cfg.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}}
	}
	g.srv = &http.Server{Handler: http.HandlerFunc(g.serve), ReadHeaderTimeout: 30 * time.Second, ErrorLog: zap.NewStdLog(log)}
	go func() {
		if err := g.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("model gate stopped", zap.Error(err))
		}
	}()
	return g, nil
}

// Close stops the gate.
func (g *cliGate) Close() { _ = g.srv.Close() }

// ErrCLIOwnTools is returned when a CLI offers its model a tool that is not massgen's.
var ErrCLIOwnTools = errors.New("the CLI offered its model tools of its own, which would bypass massgen's permission checks")

func (g *cliGate) serve(w http.ResponseWriter, r *http.Request) {
	if !g.authorized(r) {
		http.Error(w, "massgen model gate: unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Header.Get("Upgrade") != "" {
		// A WebSocket's messages would pass unread: the CLI falls back to HTTP.
		http.Error(w, "massgen model gate: no WebSockets", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, cliGateMaxBody+1))
	if err != nil || len(body) > cliGateMaxBody {
		http.Error(w, "massgen model gate: request unreadable or too large", http.StatusRequestEntityTooLarge)
		return
	}
	g.findStrays(body)
	if foreign := g.foreignTools(body); len(foreign) > 0 {
		err := fmt.Errorf("%w (%s); massgen refused the request before it reached the model and stopped the agent", ErrCLIOwnTools, strings.Join(foreign, ", "))
		select {
		case g.refused <- err:
		default:
		}
		g.log.Warn("model gate refused a request", zap.Strings("tools", foreign))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "massgen refused this request: it offers tools that are not massgen's: " + strings.Join(foreign, ", "), "type": "invalid_request_error", "code": 400}})
		return
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = g.target.Scheme, g.target.Host
			pr.Out.URL.Path = strings.TrimSuffix(g.target.Path, "/") + pr.In.URL.Path
			pr.Out.URL.RawPath = ""
			q := pr.In.URL.Query()
			q.Del("key")
			pr.Out.URL.RawQuery = q.Encode()
			pr.Out.Host = g.target.Host
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("X-Goog-Api-Key")
			if g.cfg.protocol == "gemini" {
				pr.Out.Header.Set("X-Goog-Api-Key", g.cfg.key)
			} else if g.cfg.key != "" {
				pr.Out.Header.Set("Authorization", "Bearer "+g.cfg.key)
			}
		},
		Transport:     g.cfg.client.Transport,
		FlushInterval: -1,
		ErrorLog:      zap.NewStdLog(g.log),
	}
	if proxy.Transport == nil {
		proxy.Transport = http.DefaultTransport
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	proxy.ServeHTTP(w, r)
}

// authorized reports whether r carries the gate's token where the CLI puts its key.
func (g *cliGate) authorized(r *http.Request) bool {
	for _, got := range []string{strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.Header.Get("X-Goog-Api-Key"), r.URL.Query().Get("key")} {
		if got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) == 1 {
			return true
		}
	}
	return false
}

// foreignTools lists the tools a request offers the model that are not massgen's. A body that
// is not JSON offers none.
func (g *cliGate) foreignTools(body []byte) []string {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var foreign []string
	switch g.cfg.protocol {
	case "responses":
		var req struct {
			Tools []json.RawMessage `json:"tools"`
			Input json.RawMessage   `json:"input"`
		}
		if json.Unmarshal(body, &req) != nil {
			return nil
		}
		tools := req.Tools
		var items []struct {
			Type  string            `json:"type"`
			Tools []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(req.Input, &items) == nil {
			for _, it := range items {
				if it.Type == "additional_tools" {
					tools = append(tools, it.Tools...)
				}
			}
		}
		foreign = g.responsesForeign(tools, "")
	case "gemini":
		var req struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(body, &req) != nil {
			return nil
		}
		for _, t := range req.Tools {
			for k, v := range t {
				if k != "functionDeclarations" {
					foreign = append(foreign, k)
					continue
				}
				var decls []struct {
					Name string `json:"name"`
				}
				_ = json.Unmarshal(v, &decls)
				for _, d := range decls {
					if name, ok := strings.CutPrefix(d.Name, "mcp_"+ccServerName+"_"); !ok || !g.allowed[name] {
						foreign = append(foreign, d.Name)
					}
				}
			}
		}
	}
	slices.Sort(foreign)
	return slices.Compact(foreign)
}

// findStrays reports the model's calls of tools that are not massgen's in the conversation a
// Responses request sends (codex answers them with an error itself, and says nothing of them
// in its output). The conversation is sent again with each request: the backend counts each
// call once, by its id.
func (g *cliGate) findStrays(body []byte) {
	if g.cfg.protocol != "responses" {
		return // gemini reports every call in its output
	}
	var req struct {
		Input []struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
			CallID    string `json:"call_id"`
		} `json:"input"`
	}
	if json.Unmarshal(body, &req) != nil {
		return
	}
	for _, it := range req.Input {
		if it.Type != "function_call" && it.Type != "custom_tool_call" {
			continue
		}
		// massgen's tools, however the CLI writes their names back (in the namespace, with
		// the prefix, or bare), are not strays.
		name, _ := strings.CutPrefix(it.Name, ccToolPrefix)
		if g.allowed[name] || codexHarmless[it.Name] {
			continue
		}
		select {
		case g.strays <- ccUse{id: it.CallID, name: cmpOr(strings.TrimPrefix(it.Namespace+"."+it.Name, "."), "?")}:
		default:
		}
	}
}

// codexHarmless are tools codex offers besides its own switches' reach that touch nothing:
// the MCP resource readers reach only the MCP servers it has (the bridge, which has no
// resources), and request_user_input is refused by codex itself in exec mode.
var codexHarmless = map[string]bool{
	"list_mcp_resources": true, "list_mcp_resource_templates": true, "read_mcp_resource": true, "request_user_input": true,
}

// responsesForeign checks Responses tools: functions named mcp__massgen__<tool>, or the
// namespace mcp__massgen holding massgen's tools.
func (g *cliGate) responsesForeign(tools []json.RawMessage, ns string) []string {
	var foreign []string
	for _, raw := range tools {
		var t struct {
			Type  string            `json:"type"`
			Name  string            `json:"name"`
			Tools []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(raw, &t) != nil {
			foreign = append(foreign, "(unreadable tool)")
			continue
		}
		switch {
		case t.Type == "namespace" && ns == "" && t.Name == "mcp__"+ccServerName:
			foreign = append(foreign, g.responsesForeign(t.Tools, t.Name)...)
		case t.Type == "function" && ns != "":
			if !g.allowed[t.Name] {
				foreign = append(foreign, ns+"."+t.Name)
			}
		case t.Type == "function":
			name, ok := strings.CutPrefix(t.Name, ccToolPrefix)
			if !(ok && g.allowed[name]) && !codexHarmless[t.Name] {
				foreign = append(foreign, t.Name)
			}
		default:
			foreign = append(foreign, cmpOr(t.Name, t.Type))
		}
	}
	return foreign
}
