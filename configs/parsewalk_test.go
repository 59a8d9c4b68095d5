package configs

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/vocab"
	"gopkg.in/yaml.v3"
)

// walkCases are configs the one walk is held to the two walks before it with: every example,
// the shared MassGen configs when present, and YAML that aliases, merges and refuses words.
func walkCases(t testing.TB) map[string][]byte {
	cases := walkSeeds()
	for _, n := range Examples() {
		data, err := Example(n)
		if err != nil {
			t.Fatal(err)
		}
		cases["example "+n] = data
	}
	for _, dir := range []string{"/work/shared/massgen-0.1.91/massgen/configs", "/work/shared/massgen-configs"} {
		_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".yaml") {
				if data, err := os.ReadFile(p); err == nil {
					cases[p] = data
				}
			}
			return nil
		})
	}
	return cases
}

// walkSeeds are the small hand-made cases (the fuzzer's seeds, with one example).
func walkSeeds() map[string][]byte {
	cases := map[string][]byte{
		"words": []byte(`agents:
  - id: a
    backend: {type: openai, model: m, cwd: ws}
    permissions: {mode: sometimes, allow: [x]}
orchestrator:
  context_paths: [{path: ., permission: writeish}, {path: b, permission: read}]
command_sandbox: maybe
`),
		"aliases and merges": []byte(`base: &base {type: openai, model: m}
perm: &perm {mode: nope}
agents:
  - &agent
    id: a
    backend: {<<: *base, cwd: ws}
    permissions: *perm
  - <<: *agent
    id: b
    permissions: {<<: *perm, deny: [y]}
orchestrator:
  coordination: {<<: *base, extra: {deep: [1, {x: *perm}]}}
  context_paths: [*perm, {path: ., permission: *perm}]
`),
		"anchored key refused elsewhere": []byte(`agents:
  - id: a
    backend: &be {type: openai, model: m, cwd: ws, &k strange: 1}
    permissions: {mode: *k}
  - id: b
    backend: *be
    permissions: {mode: *k}
`),
		"self alias":        []byte("a: &x [*x]\nagents: &y [{id: a, backend: {type: openai}, permissions: {mode: *y}}]\n"),
		"merge in a map":    []byte("agents: [{id: a, backend: {type: openai, model: m, env: {<<: {A: 1}, B: 2}}}]\n"),
		"wrong kinds":       []byte("agents: {id: a}\norchestrator: [1, 2]\ncommand_sandbox: [a]\n"),
		"mcp servers":       []byte("agent: {id: a, backend: {type: openai, mcp_servers: {fs: {command: npx}, bad: 1}}}\n"),
		"null and scalars":  []byte("agents: ~\norchestrator: 3\n"),
		"sequence of words": []byte("agents: [{id: a, backend: {type: openai}, permissions: {mode: [acceptEdits]}}]\n"),
	}
	return cases
}

// walkBoth runs the two walks before (index, then checkWords) and the one walk now on two
// parses of data, and says how they differ ("" for not at all): the lines, the problems in
// order, the tree as the decoder reads it afterwards (refused words blanked), and the words
// walked alone (DecodeStrict's walk).
func walkBoth(data []byte) string { return walkBothAs(data, typeOfConfig) }

func walkBothAs(data []byte, typ reflect.Type) string {
	parse := func() *document {
		d, err := parseDocument("f.yaml", data)
		if err != nil {
			return nil
		}
		d.normalize()
		return d
	}
	before, now := parse(), parse()
	if before == nil {
		return ""
	}
	var pb, pn []Problem
	before.oldIndex(before.root, typ, "")
	before.oldCheckWords(before.root, typ, "", func(p Problem) { pb = append(pb, p) })
	now.index(now.root, typ, "")
	now.checkWords(now.root, typ, "", func(p Problem) { pn = append(pn, p) })
	var diffs []string
	if !reflect.DeepEqual(before.lines, now.lines) {
		diffs = append(diffs, "lines differ")
	}
	if !reflect.DeepEqual(pb, pn) {
		diffs = append(diffs, "problems differ")
	}
	tb, _ := yaml.Marshal(before.root)
	tn, _ := yaml.Marshal(now.root)
	if string(tb) != string(tn) {
		diffs = append(diffs, "trees differ")
	}
	alone1, alone2 := parse(), parse()
	var wb, wn []Problem
	alone1.oldCheckWords(alone1.root, typ, "", func(p Problem) { wb = append(wb, p) })
	alone2.checkWords(alone2.root, typ, "", func(p Problem) { wn = append(wn, p) })
	if !reflect.DeepEqual(wb, wn) {
		diffs = append(diffs, "words alone differ")
	}
	if len(diffs) > 0 {
		return strings.Join(diffs, ", ") + "\nlines before " + strings.Join(sortedKeys(before.lines), " ") + "\nlines now    " + strings.Join(sortedKeys(now.lines), " ")
	}
	return ""
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+":"+strconv.Itoa(v))
	}
	slices.Sort(out)
	return out
}

// TestSchemaWalkAsBefore: the one walk along the schema records the lines and refuses the words
// the two walks before it did, in the same order, leaving the same tree.
func TestSchemaWalkAsBefore(t *testing.T) {
	cases := walkCases(t)
	for name, data := range cases {
		if d := walkBoth(data); d != "" {
			t.Errorf("%s: %s", name, d)
		}
	}
	if len(cases) < 20 {
		t.Errorf("only %d configs walked", len(cases))
	}
	// A schema the config's does not have: typed maps of words and of structs holding words,
	// where a merge key is a key like any other for the words and a merge for the lines.
	type entry struct {
		Mode  vocab.PermissionMode            `yaml:"mode"`
		Modes map[string]vocab.PermissionMode `yaml:"modes"`
		Any   any                             `yaml:"any"`
	}
	type schema struct {
		Words   map[string]vocab.PermissionMode `yaml:"words"`
		Entries map[string]*entry               `yaml:"entries"`
		List    []entry                         `yaml:"list"`
		Extra   map[string]any                  `yaml:",inline"`
	}
	for _, data := range []string{
		"words: {<<: {a: nope}, b: default, <<: {c: x}}\nentries: {<<: {e: {mode: bad}}, f: {mode: worse, modes: {<<: {g: x}}}}\n",
		"m: &m {mode: bad, <<: {mode: bad2}}\nentries: {x: *m, <<: {y: *m}}\nlist: [*m, {<<: *m, any: {<<: *m}}]\nwords: *m\n",
		"k: {&k strange: 1}\nwords: {a: *k}\nentries: {x: {mode: *k, any: {<<: {strange: 2}}}}\nz: {<<: [{a: 1}, {b: 2}]}\n",
	} {
		if d := walkBothAs([]byte(data), reflect.TypeFor[schema]()); d != "" {
			t.Errorf("%q: %s", data, d)
		}
	}
}

// FuzzSchemaWalk: for any YAML, the one walk does what the two did.
func FuzzSchemaWalk(f *testing.F) {
	for _, data := range walkSeeds() {
		f.Add(data)
	}
	if data, err := Example("basic/single/single_agent"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := walkBoth(data); d != "" {
			t.Fatalf("%s\n%s", d, data)
		}
	})
}

// BenchmarkSchemaWalk: the walks along the schema of a load (index and checkWords) on the
// largest example, as one walk now and as the two walks before.
func BenchmarkSchemaWalk(b *testing.B) {
	var data []byte
	for _, n := range Examples() {
		if e, _ := Example(n); len(e) > len(data) {
			data = e
		}
	}
	doc := func(b *testing.B) *document {
		d, err := parseDocument("f.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	b.Run("one walk", func(b *testing.B) {
		for b.Loop() {
			d := doc(b)
			d.index(d.root, typeOfConfig, "")
			d.checkWords(d.root, typeOfConfig, "", func(Problem) {})
		}
	})
	b.Run("two walks (before)", func(b *testing.B) {
		for b.Loop() {
			d := doc(b)
			d.oldIndex(d.root, typeOfConfig, "")
			d.oldCheckWords(d.root, typeOfConfig, "", func(Problem) {})
		}
	})
	b.Run("parse only", func(b *testing.B) {
		for b.Loop() {
			doc(b)
		}
	})
}
