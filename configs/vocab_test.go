package configs

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen/internal/vocab"
)

// vocabDocs is where the documentation lists each vocabulary's words: the first match of the
// pattern in the file, whose group 1 starts the list (see listedWords).
var vocabDocs = map[reflect.Type]struct{ file, pattern string }{
	reflect.TypeFor[vocab.PermissionMode]():    {"permissions.md", `(?m)^\s*mode: \w+ +# (.*)$`},
	reflect.TypeFor[vocab.Access]():            {"configuration.md", "(?m)`permission` \\((.*)$"},
	reflect.TypeFor[vocab.Strictness]():        {"configuration.md", "(?m)^\\| `answer_novelty_requirement` \\| (.*)$"},
	reflect.TypeFor[vocab.VotingSensitivity](): {"configuration.md", "(?m)^\\| `voting_sensitivity` \\| (.*)$"},
	reflect.TypeFor[vocab.SandboxMode]():       {"configuration.md", "(?m)^\\| `command_sandbox:` \\| (.*)$"},
	reflect.TypeFor[vocab.NetworkMode]():       {"configuration.md", "(?m)what every agent's commands may reach: `mode` (.*)$"},
	reflect.TypeFor[vocab.MCPTransport]():      {"mcp.md", `(?m)^\s*type: streamable-http +# (.*)$`},
	reflect.TypeFor[vocab.SecurityLevel]():     {"mcp.md", "(?m)^  - `level`: (.*)$"},
	reflect.TypeFor[vocab.EnvMode]():           {"mcp.md", "`mode: ([^`]*)`"},
	reflect.TypeFor[vocab.Phase]():             {"backends.md", "(?m)^\\| `phase` \\| (.*)$"},
	reflect.TypeFor[vocab.Display]():           {"configuration.md", "(?m)^\\| `ui.display_type` \\| (.*)$"},
}

// untypedVocabKeys are keys taking a vocabulary's words that the schema keeps as strings:
// ui.display_type, which MassGen reads whatever it says, is warned about, not refused.
var untypedVocabKeys = map[reflect.Type][]string{
	reflect.TypeFor[vocab.Display](): {"ui.display_type"},
}

// TestVocabularies: each closed vocabulary of the config (internal/vocab, the one place its
// words are written) drives what configs refuses, and the words listed by the docs and by the
// key table (whose notes make docs/massgen-compatibility.md; massgen emits no JSON schema):
// for every key whose schema type is a vocabulary, each word loads, a word outside it is
// refused at its file:line with the words known, and the key's note and the docs name exactly
// those words.
func TestVocabularies(t *testing.T) {
	notes := map[string]string{}
	for _, k := range keyTable {
		notes[k.Path] = k.Note
	}
	for _, v := range vocab.All() {
		t.Run(v.Type.Name(), func(t *testing.T) {
			keys := vocabKeys(typeOfConfig, v.Type, "")
			untyped := untypedVocabKeys[v.Type]
			if len(keys)+len(untyped) == 0 {
				t.Fatalf("no config key takes %s", v.Type)
			}
			known := "(known: " + strings.Join(v.Values, ", ") + ")"
			for _, key := range append(slices.Clone(keys), untyped...) {
				typed := slices.Contains(keys, key)
				at := strings.ReplaceAll(key, "[]", "[0]")
				for _, w := range v.Values {
					_, warns, err := LoadBytes("config.yaml", yamlWith(t, key, w), LoadOptions{BaseDir: t.TempDir()})
					for _, p := range problemsOf(err) {
						if p.Key == at {
							t.Errorf("%s: %s: %q refused: %s", v.Type.Name(), key, w, p)
						}
					}
					for _, w := range warns {
						if w.Key == at {
							t.Errorf("%s: %s: warned: %s", v.Type.Name(), key, w)
						}
					}
				}
				const bad = "bogus-word"
				doc := yamlWith(t, key, bad)
				line := lineOfKey(doc, key)
				_, warns, err := LoadBytes("config.yaml", doc, LoadOptions{BaseDir: t.TempDir()})
				want := `config.yaml:` + strconv.Itoa(line) + `: ` + at + `: unknown ` + v.Noun + ` "` + bad + `" ` + known
				found := ""
				if typed {
					for _, p := range problemsOf(err) {
						if p.Key == at {
							found = p.String()
						}
					}
				} else {
					for _, w := range warns {
						if w.Key == at {
							found = position(w.File, w.Line) + w.Message
						}
					}
				}
				if !strings.HasPrefix(found, want) {
					t.Errorf("%s = %s: got %q, want %q...", key, bad, found, want)
				}
				note, ok := notes[key]
				if !ok {
					t.Errorf("%s: not in the key table", key)
				} else if got := listedWords(note); !slices.Equal(got, v.Values) {
					t.Errorf("key table note of %s lists %q, want %q: %q", key, got, v.Values, note)
				}
			}
			d, ok := vocabDocs[v.Type]
			if !ok {
				t.Fatalf("no doc listing %s's words: add it to vocabDocs", v.Type)
			}
			text, err := os.ReadFile(filepath.Join("..", "docs", d.file))
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(d.pattern).FindSubmatch(text)
			if m == nil {
				t.Fatalf("docs/%s: no match for %s", d.file, d.pattern)
			}
			if got := listedWords(string(m[1])); !slices.Equal(got, v.Values) {
				t.Errorf("docs/%s lists %q, want %q: %q", d.file, got, v.Values, m[1])
			}
		})
	}
}

// TestDisplayAliasesDocumented: the key table and the docs name MassGen's display names.
func TestDisplayAliasesDocumented(t *testing.T) {
	k, _ := LookupKey("ui.display_type", "")
	doc, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"rich_terminal", "textual_terminal", "simple"} {
		if _, err := vocab.ParseDisplay(a); err != nil {
			t.Errorf("%s: %v", a, err)
		}
		if !strings.Contains(k.Note, a) || !strings.Contains(string(doc), "`"+a+"`") {
			t.Errorf("MassGen's display %s is not named by the key table or docs/configuration.md", a)
		}
	}
}

// TestWordProblems: a refused word does not hide the config's other problems, and one reached
// through an alias or written as null is handled as YAML means it.
func TestWordProblems(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // problems, in order ("" none)
	}{
		{"with a missing id", "agents:\n  - backend: {type: openai}\npermissions:\n  mode: yolo\n",
			[]string{"config.yaml:2: agents[0]: missing id", `config.yaml:4: permissions.mode: unknown mode "yolo"`}},
		{"through an alias", "x: &m yolo\nagents:\n  - id: a\n    backend: {type: openai}\npermissions:\n  mode: *m\n",
			[]string{`config.yaml:6: permissions.mode: unknown mode "yolo"`}},
		{"null is unset", "agents:\n  - id: a\n    backend: {type: openai}\npermissions:\n  mode: ~\ncommand_sandbox: null\n", nil},
		{"a list where a word belongs", "agents:\n  - id: a\n    backend: {type: openai}\ncommand_sandbox: [none]\n",
			[]string{"config.yaml:4: cannot unmarshal !!seq into vocab.SandboxMode"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadBytes("config.yaml", []byte(tt.yaml), LoadOptions{BaseDir: t.TempDir()})
			probs := problemsOf(err)
			if len(probs) != len(tt.want) {
				t.Fatalf("problems %v, want %q", probs, tt.want)
			}
			for i, p := range probs {
				if !strings.HasPrefix(p.String(), tt.want[i]) {
					t.Errorf("problem %d = %q, want %q...", i, p, tt.want[i])
				}
			}
		})
	}
}

// vocabKeys lists the keys below t ("agents[].permissions.mode") whose type is vt.
func vocabKeys(t, vt reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == vt {
		return []string{path}
	}
	switch t.Kind() {
	case reflect.Struct:
		var out []string
		fields, _ := yamlFields(t)
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			out = append(out, vocabKeys(fields[name], vt, joinPath(path, name))...)
		}
		return out
	case reflect.Slice:
		return vocabKeys(t.Elem(), vt, path+"[]")
	}
	return nil
}

// yamlWith is a config setting key (a vocabKeys path) to word.
func yamlWith(t *testing.T, key, word string) []byte {
	t.Helper()
	var v any = word
	parts := strings.Split(key, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		name, list := strings.CutSuffix(parts[i], "[]")
		if list {
			v = []any{v}
		}
		v = map[string]any{name: v}
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// lineOfKey is the line of key's last name in a yamlWith document.
func lineOfKey(doc []byte, key string) int {
	last := key[strings.LastIndex(key, ".")+1:]
	for i, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " -"), last+":") {
			return i + 1
		}
	}
	return 0
}

func problemsOf(err error) []Problem {
	if err == nil {
		return nil
	}
	if ve, ok := err.(*ValidationError); ok {
		return ve.Problems
	}
	return []Problem{{Message: err.Error()}}
}

// listedWords reads the words a doc or note lists at its start: up to the first ':', ';' or
// '.' outside parentheses and backquotes; in Markdown the words in backquotes there, elsewhere
// the words between ",", " or ", "|" and "/". Asides in parentheses are not words.
func listedWords(s string) []string {
	var region strings.Builder
	depth, quoted := 0, false
scan:
	for _, r := range s {
		switch {
		case r == '`':
			quoted = !quoted
		case quoted:
		case r == '(':
			depth++
			continue
		case r == ')':
			depth--
			continue
		case depth == 0 && strings.ContainsRune(":;.", r):
			break scan
		}
		if depth == 0 {
			region.WriteRune(r)
		}
	}
	text := strings.ReplaceAll(region.String(), `\|`, "|")
	var out []string
	if strings.Contains(text, "`") {
		for i, part := range strings.Split(text, "`") {
			if i%2 == 1 {
				out = append(out, part)
			}
		}
		return out
	}
	for _, w := range regexp.MustCompile(`,| or |\||/`).Split(text, -1) {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}
