package backends

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"google.golang.org/genai"
)

// builtinTools are the enabled built-in tools, as the API declares them.
func (b *geminiBackend) builtinTools() []*genai.Tool {
	var tools []*genai.Tool
	if b.webSearch {
		tools = append(tools, &genai.Tool{GoogleSearch: &genai.GoogleSearch{}})
	}
	if b.codeExecution {
		tools = append(tools, &genai.Tool{CodeExecution: &genai.ToolCodeExecution{}})
	}
	return tools
}

// geminiCombinesTools reports whether model accepts built-in tools and function declarations
// in one request (Gemini 3 and later, with includeServerSideToolInvocations). Older models
// refuse the combination, and a name without a version is not trusted with it.
func geminiCombinesTools(model string) bool {
	m := strings.ToLower(strings.TrimPrefix(model, "models/"))
	rest, ok := strings.CutPrefix(m, "gemini-")
	if !ok {
		return false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	major, err := strconv.Atoi(rest[:end])
	return err == nil && major >= 3
}

// geminiProxy is a built-in tool offered to a model that cannot combine it with function
// declarations: the model calls it as a function, and the backend answers the call with a
// request of its own that uses only the built-in tool.
type geminiProxy struct {
	decl *genai.FunctionDeclaration
	tool *genai.Tool
	// prompt turns the call's arguments into the request's prompt ("" if they are unusable).
	prompt func(args map[string]any) string
	// arg is the one argument the function takes.
	arg string
	// code says whether the code run and its output join the answer text.
	code bool
}

const (
	geminiSearchFunc = "google_search"
	geminiCodeFunc   = "code_execution"
)

// proxies are the enabled built-in tools as functions, by name. A name our own tools already
// use is left out (the model could not tell them apart).
func (b *geminiBackend) proxies(decls []*genai.FunctionDeclaration) map[string]geminiProxy {
	taken := map[string]bool{}
	for _, d := range decls {
		taken[d.Name] = true
	}
	out := map[string]geminiProxy{}
	addProxy := func(p geminiProxy) {
		if taken[p.decl.Name] {
			b.log.Warn("built-in tool not offered: one of the agent's tools has its name", zap.String("tool", p.decl.Name))
			return
		}
		out[p.decl.Name] = p
	}
	if b.webSearch {
		addProxy(geminiProxy{
			decl: &genai.FunctionDeclaration{
				Name:        geminiSearchFunc,
				Description: "Search the web with Google Search. Returns what the search found about the query, with its sources.",
				ParametersJsonSchema: map[string]any{"type": "object", "required": []any{"query"},
					"properties": map[string]any{"query": map[string]any{"type": "string", "description": "What to search for."}}},
			},
			tool: &genai.Tool{GoogleSearch: &genai.GoogleSearch{}},
			arg:  "query",
			prompt: func(args map[string]any) string {
				q, _ := args["query"].(string)
				if strings.TrimSpace(q) == "" {
					return ""
				}
				return "Search the web with Google Search for: " + q + "\n\nReport what the search found, with the facts and figures, briefly."
			},
		})
	}
	if b.codeExecution {
		addProxy(geminiProxy{
			decl: &genai.FunctionDeclaration{
				Name:        geminiCodeFunc,
				Description: "Run Python code in Google's code execution sandbox and return its output. The sandbox has no access to your files or tools.",
				ParametersJsonSchema: map[string]any{"type": "object", "required": []any{"code"},
					"properties": map[string]any{"code": map[string]any{"type": "string", "description": "The Python code to run."}}},
			},
			tool: &genai.Tool{CodeExecution: &genai.ToolCodeExecution{}},
			arg:  "code",
			prompt: func(args map[string]any) string {
				code, _ := args["code"].(string)
				if strings.TrimSpace(code) == "" {
					return ""
				}
				return "Run this Python code with the code execution tool, exactly as written, and report its output:\n\n```python\n" + code + "\n```"
			},
			code: true,
		})
	}
	return out
}

// runProxy answers a call of a proxied built-in tool: it makes the request that uses the tool,
// adds the code run and its output (for code execution) and the sources to the reply, and
// returns what the model is told. A failure is told to the model, not returned: the reply can
// go on without the tool.
func (b *geminiBackend) runProxy(ctx context.Context, p geminiProxy, fc *genai.FunctionCall, turn *geminiTurn) string {
	prompt := p.prompt(fc.Args)
	if prompt == "" {
		return "error: the call has no " + p.arg + " argument"
	}
	cfg := b.base
	cfg.Tools = []*genai.Tool{p.tool}
	contents := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: prompt}}}}
	sub := &geminiTurn{answer: answer{emit: func(Event) {}}}
	_, err := b.call.generate(ctx, nil, func(ctx context.Context, tap *streamTap, _ func(Event)) (*Response, error) {
		sub = &geminiTurn{answer: answer{emit: func(Event) {}}}
		c := cfg
		_, _, err := b.stream(ctx, tap, contents, &c, sub)
		return nil, err
	})
	if err != nil {
		b.log.Warn("built-in tool request failed", zap.String("tool", fc.Name), zap.Error(err))
		return "error: " + err.Error()
	}
	turn.usage.Add(sub.usage)
	for _, s := range sub.sources.items {
		turn.sources.add(s.title, s.url)
	}
	if p.code {
		turn.say(sub.code.String())
	}
	result := strings.TrimSpace(sub.text.String())
	if src := sub.sources.render(); src != "" {
		result += src
	}
	if result == "" {
		return fmt.Sprintf("%s returned nothing", fc.Name)
	}
	return result
}
