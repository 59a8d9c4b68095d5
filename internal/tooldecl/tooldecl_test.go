package tooldecl

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

type item struct {
	A string `json:"a" required:"true" description:"first"`
	B string `json:"b" description:"second"`
}

type items []item

func (l *items) BindArg(v any) error {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return errors.New("items: want a list")
	}
	for _, e := range list {
		m, _ := e.(map[string]any)
		a, _ := m["a"].(string)
		*l = append(*l, item{A: a})
	}
	return nil
}

type params struct {
	Src     string          `json:"src" access:"read" required:"true"`
	Dst     string          `json:"dst" access:"write" readIf:"dry" required:"true" empty:"ok" description:"Where to."`
	Paths   []string        `json:"paths" access:"delete" description:"More."`
	Dry     bool            `json:"dry" description:"Only look."`
	N       int             `json:"n" description:"How many."`
	Limit   *int            `json:"limit" description:"Optional limit."`
	Note    *string         `json:"note" description:"A note."`
	Kind    string          `json:"kind" enum:"x,y" description:"Kind."`
	Blob    json.RawMessage `json:"blob" type:"object" description:"Anything."`
	Items   items           `json:"items" description:"Items."`
	ignored string
}

func decl(lenient bool) *Decl[params] {
	return New(Def[params]{Name: "demo", Description: "  Demo tool.\n", Order: 1, Lenient: lenient,
		Summary: func(p params) string { return Notes(If(p.Dry, "dry"), Size(p.N)) }})
}

func TestBind(t *testing.T) {
	one, s := 1, "hi"
	tests := []struct {
		name    string
		lenient bool
		args    string
		want    params
		err     string
	}{
		{name: "all kinds", args: `{"src":"a","dst":"","paths":["p","q"],"dry":"yes","n":"3","limit":1,"note":"hi","kind":"x","blob":{"k":[1]},"items":[{"a":"z"}]}`,
			want: params{Src: "a", Paths: []string{"p", "q"}, Dry: true, N: 3, Limit: &one, Note: &s, Kind: "x", Blob: json.RawMessage(`{"k":[1]}`), Items: items{{A: "z"}}}},
		{name: "one string for a list", args: `{"src":"a","dst":"b","paths":"p"}`, want: params{Src: "a", Dst: "b", Paths: []string{"p"}}},
		{name: "null is absent", args: `{"src":"a","dst":"b","limit":null,"paths":null}`, want: params{Src: "a", Dst: "b"}},
		{name: "missing", args: `{"dst":"b"}`, err: `missing argument "src"`},
		{name: "blank", args: `{"src":"  ","dst":"b"}`, err: `argument "src" is empty`},
		{name: "empty allowed", args: `{"src":"a","dst":""}`, want: params{Src: "a"}},
		{name: "wrong string", args: `{"src":7,"dst":"b"}`, err: `argument "src" must be a string, got float64`},
		{name: "wrong bool", args: `{"src":"a","dst":"b","dry":"maybe"}`, err: `argument "dry" must be a boolean, got maybe`},
		{name: "fraction", args: `{"src":"a","dst":"b","n":1.5}`, err: `argument "n" must be an integer, got 1.5`},
		{name: "huge", args: `{"src":"a","dst":"b","n":1e12}`, err: `argument "n" must be an integer, got 1e+12`},
		{name: "list item", args: `{"src":"a","dst":"b","paths":["p",3]}`, err: `argument paths[1] must be a string, got float64`},
		{name: "list type", args: `{"src":"a","dst":"b","paths":{}}`, err: `argument "paths" must be a list of strings, got map[string]interface {}`},
		{name: "binder", args: `{"src":"a","dst":"b","items":"x"}`, err: `items: want a list`},
		{name: "unknown", args: `{"src":"a","dst":"b","zz":1,"mode":"x"}`, err: `unexpected argument(s) mode, zz (valid: blob, dry, dst, items, kind, limit, n, note, paths, src)`},
		{name: "lenient: missing and unknown", lenient: true, args: `{"zz":1,"src":""}`, want: params{}},
		{name: "lenient: wrong type", lenient: true, args: `{"src":1}`, err: `argument "src" must be a string, got float64`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Decode(json.RawMessage(tt.args))
			if a.Err != nil {
				t.Fatal(a.Err)
			}
			got, err := decl(tt.lenient).Bind(a.Map)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Bind(%s) error = %v, want %q", tt.args, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Bind(%s): %v", tt.args, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Bind(%s)\n got %+v\nwant %+v", tt.args, got, tt.want)
			}
		})
	}
}

// Bind takes what it can: the arguments that bind are set even when another one does not.
func TestBindTakesWhatItCan(t *testing.T) {
	p, err := decl(false).Bind(map[string]any{"src": 1, "dst": "b", "n": 4.0, "zz": true})
	if err == nil || !strings.HasPrefix(err.Error(), "unexpected argument(s) zz") {
		t.Fatalf("err = %v", err)
	}
	if p.Dst != "b" || p.N != 4 {
		t.Errorf("bound %+v", p)
	}
}

func TestDeclFromTags(t *testing.T) {
	d := decl(false)
	if d.Description() != "Demo tool." {
		t.Errorf("description %q", d.Description())
	}
	want := toolargs.Tool{Name: "demo", Args: []toolargs.Arg{
		{Name: "src", Access: toolargs.Read},
		{Name: "dst", Access: toolargs.Write, ReadIf: "dry"},
		{Name: "paths", Access: toolargs.Delete, List: true, Optional: true},
	}}
	if got := d.Decl(); !reflect.DeepEqual(got, want) {
		t.Errorf("Decl\n got %+v\nwant %+v", got, want)
	}
	if !d.Writes() || d.ReadOnly() || !d.Destructive() {
		t.Errorf("flags: writes %v read-only %v destructive %v", d.Writes(), d.ReadOnly(), d.Destructive())
	}
	type cmd struct {
		Command string `json:"command" access:"command" required:"true"`
		Dir     string `json:"work_dir" access:"read"`
	}
	c := New(Def[cmd]{Name: "run", Description: "Run.", Cancellable: true})
	if got := c.Decl(); !got.Command || !got.Cancellable || len(got.Args) != 1 || !got.Args[0].Optional {
		t.Errorf("command decl %+v", got)
	}
	if c.ReadOnly() || !c.Destructive() || c.Writes() {
		t.Errorf("a command is neither read-only nor writing a path argument: %v %v %v", c.ReadOnly(), c.Destructive(), c.Writes())
	}
	adds := New(Def[struct {
		P string `json:"p" access:"write" required:"true"`
	}]{Name: "mk", Description: "Make.", OnlyAdds: true})
	if !adds.Writes() || adds.Destructive() {
		t.Error("a tool that only adds writes and is not destructive")
	}
	if got := d.Params(); len(got) != 10 || got[9].Name != "items" || !reflect.DeepEqual(got[9].Items, []string{"a", "b"}) || !got[0].Required {
		t.Errorf("Params = %+v", got)
	}
}

func TestSchema(t *testing.T) {
	got, _ := json.Marshal(decl(false).Schema())
	want := `{"additionalProperties":false,"properties":{` +
		`"blob":{"description":"Anything.","type":"object"},` +
		`"dry":{"description":"Only look.","type":"boolean"},` +
		`"dst":{"description":"Where to.","type":"string"},` +
		`"items":{"description":"Items.","items":{"additionalProperties":false,"properties":{"a":{"description":"first","type":"string"},"b":{"description":"second","type":"string"}},"required":["a"],"type":"object"},"type":"array"},` +
		`"kind":{"description":"Kind.","enum":["x","y"],"type":"string"},` +
		`"limit":{"description":"Optional limit.","type":"integer"},` +
		`"n":{"description":"How many.","type":"integer"},` +
		`"note":{"description":"A note.","type":"string"},` +
		`"paths":{"description":"More.","items":{"type":"string"},"type":"array"},` +
		`"src":{"description":"Absolute path, or relative to your workspace.","type":"string"}},` +
		`"required":["src","dst"],"type":"object"}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	type open struct {
		OK bool `json:"ok" enum:"true" required:"true"`
	}
	got, _ = json.Marshal(New(Def[open]{Name: "o", Description: "O.", Open: true}).Schema())
	if want := `{"properties":{"ok":{"enum":[true],"type":"boolean"}},"required":["ok"],"type":"object"}`; string(got) != want {
		t.Errorf("open schema %s", got)
	}
	s := decl(false).Schema()
	SetEnum(s, "kind", []string{"agent1", "agent2"})
	if got := s["properties"].(map[string]any)["kind"].(map[string]any)["enum"]; !reflect.DeepEqual(got, []string{"agent1", "agent2"}) {
		t.Errorf("enum set: %v", got)
	}
	// Each call is a new map: a caller changing one changes no other.
	a, b := decl(false).Schema(), decl(false).Schema()
	a["properties"].(map[string]any)["src"].(map[string]any)["description"] = "changed"
	if b["properties"].(map[string]any)["src"].(map[string]any)["description"] == "changed" {
		t.Error("schemas share their maps")
	}
}

// A malformed declaration panics when it is made (its package's init), naming what is wrong.
func TestNewRefusesMalformed(t *testing.T) {
	type noName struct {
		A string
	}
	type badAccess struct {
		A string `json:"a" access:"append"`
	}
	type badReadIf struct {
		A string `json:"a" access:"write" readIf:"dry"`
	}
	type pathInt struct {
		A int `json:"a" access:"read"`
	}
	type badCommand struct {
		C string `json:"cmd" access:"command"`
	}
	type badType struct {
		A float64 `json:"a"`
	}
	type rawNoType struct {
		A json.RawMessage `json:"a"`
	}
	type badRequired struct {
		A string `json:"a" required:"yes"`
	}
	cases := map[string]func(){
		"no json name":      func() { New(Def[noName]{Name: "t", Description: "d"}) },
		"access":            func() { New(Def[badAccess]{Name: "t", Description: "d"}) },
		"readIf":            func() { New(Def[badReadIf]{Name: "t", Description: "d"}) },
		"path int":          func() { New(Def[pathInt]{Name: "t", Description: "d"}) },
		"command name":      func() { New(Def[badCommand]{Name: "t", Description: "d"}) },
		"unsupported":       func() { New(Def[badType]{Name: "t", Description: "d"}) },
		"raw without type":  func() { New(Def[rawNoType]{Name: "t", Description: "d"}) },
		"required value":    func() { New(Def[badRequired]{Name: "t", Description: "d"}) },
		"no description":    func() { New(Def[struct{}]{Name: "t"}) },
		"params not struct": func() { New(Def[string]{Name: "t", Description: "d"}) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.HasPrefix(msg, "tooldecl: tool ") {
					t.Errorf("panic = %v", r)
				}
			}()
			f()
		})
	}
}

func TestPreviewAndDetails(t *testing.T) {
	d := New(Def[params]{Name: "demo", Description: "D.",
		Summary: func(p params) string { return Notes(If(p.Dry, "dry")) },
		Preview: func(p params, paths []string) string { return p.Src + " " + strings.Join(paths, ",") }})
	if got := d.Preview(map[string]any{"src": "a", "dst": "b"}, []string{"/x"}); got != "a /x" {
		t.Errorf("preview %q", got)
	}
	if got := d.Preview(map[string]any{"src": "a"}, nil); got != "" {
		t.Errorf("preview of arguments that do not bind: %q", got)
	}
	if got := d.Details(map[string]any{"dry": true, "zz": 1}); got != " (dry)" {
		t.Errorf("details bind what binds: %q", got)
	}
	if got := New(Def[params]{Name: "x", Description: "X."}).Preview(map[string]any{"src": "a", "dst": "b"}, nil); got != "" {
		t.Errorf("no Preview declared: %q", got)
	}
}

func TestSummary(t *testing.T) {
	set := Set{decl(false)}
	tests := []struct{ name, tool, args, want string }{
		{"declared", "demo", `{"src":"a","dst":"b","dry":true,"n":2048}`, "demo a, b (dry, 2.0 KB)"},
		{"behind a prefix", "mcp__s__demo", `{"src":"a","dst":"b","zz":1}`, "mcp__s__demo a, b (0 B)"},
		{"list", "demo", `{"paths":["a","b","c"]}`, "demo a, b, (+1) (0 B)"},
		{"reference server", "mcp__fs__read_text_file", `{"path":"n.md","head":3}`, "mcp__fs__read_text_file n.md"},
		{"unknown", "mcp__w__f", `{"city":"Paris","n":3,"o":{"a":1},"l":[1,2],"z":null}`, `mcp__w__f city="Paris" l=[2 items] n=3 o={…} z=null`},
		{"command by name", "mcp__x__bash", `{"command":"ls  -l\n","work_dir":"/w"}`, "mcp__x__bash ls -l (in /w)"},
		{"command without one", "bash", `{"cmd":"ls"}`, `bash cmd="ls"`},
		{"unreadable", "demo", `{"src":`, "demo (unreadable arguments)"},
		{"null", "demo", `null`, "demo (0 B)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := set.Summary(tt.tool, Decode(json.RawMessage(tt.args)), nil); got != tt.want {
				t.Errorf("Summary(%s, %s)\n got %q\nwant %q", tt.tool, tt.args, got, tt.want)
			}
		})
	}
	long := set.Summary("bash", Decode(json.RawMessage(`{"command":"`+strings.Repeat("é", 300)+`"}`)), nil)
	if n := len([]rune(long)); n != MaxSummaryRunes+1 || !strings.HasSuffix(long, "…") {
		t.Errorf("summary of %d runes: %q", n, long)
	}
}

func TestDecode(t *testing.T) {
	for raw, want := range map[string]string{"": "{}", "null": "{}", " null ": "{}", `{"a":1}`: `{"a":1}`} {
		a := Decode(json.RawMessage(raw))
		got, _ := json.Marshal(a.Map)
		if a.Err != nil || string(got) != want {
			t.Errorf("Decode(%q) = %s, %v", raw, got, a.Err)
		}
	}
	for _, raw := range []string{"[1]", `"x"`, "{"} {
		if a := Decode(json.RawMessage(raw)); a.Err == nil || a.Map != nil {
			t.Errorf("Decode(%q) = %v, want an error", raw, a.Map)
		}
	}
}

func TestRender(t *testing.T) {
	if got := Render("at most {{.N}} of {{.What}}", map[string]any{"N": 3, "What": "x"}); got != "at most 3 of x" {
		t.Errorf("Render = %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a placeholder without a value renders")
		}
	}()
	Render("{{.Missing}}", map[string]any{})
}

// BenchmarkBind: binding a decoded call's arguments into a parameter struct (every kind).
func BenchmarkBind(b *testing.B) {
	a := Decode(json.RawMessage(`{"src":"a","dst":"b","paths":["p","q"],"dry":"yes","n":"3","limit":1,"note":"hi","kind":"x","blob":{"k":[1]},"items":[{"a":"z"}]}`))
	d := decl(false)
	for b.Loop() {
		if _, err := d.Bind(a.Map); err != nil {
			b.Fatal(err)
		}
	}
}
