package configscmd

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/testing/lane"
	"github.com/massgen-go/massgen/internal/testing/massgen091"
)

// Every config of MassGen 0.1.91, validated from its folder as `massgen configs validate` does
// (dummy API keys, this machine's PATH and Python): each passes, or fails only for reasons that
// are not massgen's (massgen091.Reasons), every problem of it. No key is unknown.
func TestValidateMassGen091Configs(t *testing.T) {
	lane.Long(t)
	root := massgen091.Root(t)
	files := massgen091.Files(t, root)
	e := newTestEnv(t)
	e.wd = root // MassGen's configs name files relative to the checkout
	e.env = dummyKeys{}.env()
	opts := &ValidateOptions{IO: e.f.IO, Loader: loader(e.f)}
	known := func(typ string) bool { _, ok := configs.LookupBackendType(typ); return ok }

	type outcome struct {
		kinds []string
		err   string
	}
	var mu sync.Mutex
	results := map[string]outcome{}
	t.Run("configs", func(t *testing.T) {
		for _, file := range files {
			rel, _ := filepath.Rel(root, file)
			t.Run(rel, func(t *testing.T) {
				t.Parallel()
				_, probs, warns, _ := validateFile(opts, file)
				var o outcome
				for _, w := range warns {
					if strings.HasPrefix(w.Message, "unknown key") && massgen091.IsConfig(rel) {
						t.Errorf("%s (add it to the key table)", w)
					}
				}
				for _, p := range probs {
					kind, ok := massgen091.Classify(rel, p.Message, known)
					if !ok {
						t.Errorf("a failure that is massgen's: %s", p)
						o.err = p.String()
						continue
					}
					if !slices.Contains(o.kinds, kind) {
						o.kinds = append(o.kinds, kind)
					}
				}
				mu.Lock()
				results[rel] = o
				mu.Unlock()
			})
		}
	})
	pass := 0
	byKind := map[string]int{}
	for _, o := range results {
		if len(o.kinds) == 0 && o.err == "" {
			pass++
		}
		for _, k := range o.kinds {
			byKind[k]++
		}
	}
	var kinds []string
	for k, n := range byKind {
		kinds = append(kinds, fmt.Sprintf("%3d %s", n, k))
	}
	sort.Strings(kinds)
	t.Logf("%d of %d configs validate; the others fail for:\n%s", pass, len(results), strings.Join(kinds, "\n"))
}

// dummyKeys gives every *_API_KEY and *_TOKEN variable a value (no real key is needed to
// validate), and an Azure endpoint.
type dummyKeys struct{}

func (dummyKeys) env() map[string]string {
	m := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com"}
	for _, k := range []string{"OPENAI", "ANTHROPIC", "GEMINI", "GOOGLE", "XAI", "ZAI", "AZURE_OPENAI", "OPENROUTER", "CEREBRAS",
		"QWEN", "DASHSCOPE", "NEBIUS", "FIREWORKS", "TOGETHER", "GROQ", "MOONSHOT", "KIMI", "POE", "BRAVE", "EXA", "ELEVENLABS"} {
		m[k+"_API_KEY"] = "dummy"
	}
	return m
}
