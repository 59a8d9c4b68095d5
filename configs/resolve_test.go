package configs

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"
)

// richConfig has something of every kind Resolve copies: slices, maps, pointers, interfaces
// (backend extras, MCP server args), context paths with protected paths.
const richConfig = `agents:
  - id: a
    backend:
      type: openai
      model: gpt-4o
      cwd: ws_a
      temperature: 0.5
      mcp_servers:
        - name: s
          command: npx
          args: ["-y", "server"]
          env: {TOKEN: t0k}
    permissions:
      mode: default
      allow: ["read_file(**)"]
    read_paths: [docs]
    command_limits: {timeout_seconds: 30}
  - id: b
    backend: {type: claude, cwd: ws_b}
orchestrator:
  context_paths:
    - path: docs
      permission: read
    - path: src
      permission: write
      protected_paths: [keep, vendor]
command_limits: {timeout_seconds: 60}
`

// cmpView returns a shallow copy of c that reflect.DeepEqual can compare (functions compare
// unequal unless nil).
func cmpView(c *Config) Config {
	cp := *c
	cp.realEnv = nil
	return cp
}

// TestResolveLeavesInputUnchanged: Resolve returns a new config and never changes the loaded
// one, not even through the result: every slice, map and pointer of the result is its own, so
// writing into the result or appending to its slices cannot reach the input.
func TestResolveLeavesInputUnchanged(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"docs", "src/keep", "src/vendor", "other"} {
		write(t, base, filepath.Join(d, ".keep"), "")
	}
	in, _ := mustLoad(t, base, richConfig, env{})
	want, _ := mustLoad(t, base, richConfig, env{}) // the same file loaded again: in as it was

	out, err := Resolve(in, Inputs{BaseDir: base, MaxCostUSD: 2.5, ContextPaths: []ContextPath{
		{Path: "docs", Permission: "write", ProtectedPaths: []string{"private"}}, // replaces docs
		{Path: "other"},
		{Path: "~/notes", Permission: "read"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cmpView(in), cmpView(want)) {
		t.Fatalf("Resolve changed its input:\n got  %+v\nwant %+v", in.Orchestrator, want.Orchestrator)
	}
	wantCPs := []ContextPath{
		{Path: filepath.Join(base, "docs"), Permission: "write", ProtectedPaths: []string{filepath.Join(base, "docs/private")}},
		{Path: filepath.Join(base, "src"), Permission: "write", ProtectedPaths: []string{filepath.Join(base, "src/keep"), filepath.Join(base, "src/vendor")}},
		{Path: filepath.Join(base, "other"), Permission: "write"},
		{Path: filepath.Join(base, "home/notes"), Permission: "read"},
	}
	if !reflect.DeepEqual(out.Orchestrator.ContextPaths, wantCPs) {
		t.Errorf("context paths\n got  %+v\nwant %+v", out.Orchestrator.ContextPaths, wantCPs)
	}
	// Everything but the context paths is the input's.
	rest, inRest := cmpView(out), cmpView(in)
	if rest.Orchestrator.MaxCostUSD != 2.5 {
		t.Errorf("max cost = %v; want the input's 2.5", rest.Orchestrator.MaxCostUSD)
	}
	rest.Orchestrator.ContextPaths, inRest.Orchestrator.ContextPaths = nil, nil
	rest.Orchestrator.MaxCostUSD, inRest.Orchestrator.MaxCostUSD = 0, 0
	if !reflect.DeepEqual(rest, inRest) {
		t.Errorf("Resolve changed more than the context paths and the budget:\n got  %+v\nwant %+v", rest, inRest)
	}

	// No memory in common: a slice of the result whose array (up to its capacity) overlaps one
	// of the input's would let an append to the result write into the input.
	inMem := references(reflect.ValueOf(in).Elem(), "in")
	for _, r := range references(reflect.ValueOf(out).Elem(), "out") {
		for _, s := range inMem {
			if r.overlaps(s) {
				t.Errorf("%s shares memory with %s", r.path, s.path)
			}
		}
	}

	// And as a writer sees it: write into every element of the result, append to each of its
	// slices and maps; the input is still what was loaded.
	scribble(reflect.ValueOf(out).Elem())
	out.raw = append(out.raw[:0], "scribbled"...)
	out.lines["scribbled"] = 1
	out.home = "/scribbled"
	if !reflect.DeepEqual(cmpView(in), cmpView(want)) {
		t.Fatalf("writing into Resolve's result changed its input:\n got  %+v\nwant %+v", in, want)
	}
	if got, _ := in.LookupEnv("X"); got != "" {
		t.Errorf("LookupEnv = %q", got)
	}
}

// TestResolveErrorLeavesInputUnchanged: a refused context path changes nothing either (the
// old in-place add kept the paths before the bad one).
func TestResolveErrorLeavesInputUnchanged(t *testing.T) {
	base := t.TempDir()
	in, _ := mustLoad(t, base, richConfig, env{})
	want, _ := mustLoad(t, base, richConfig, env{})
	out, err := Resolve(in, Inputs{BaseDir: base, ContextPaths: []ContextPath{{Path: "new"}, {Path: ".", ProtectedPaths: []string{"../x"}}}})
	if err == nil || out != nil {
		t.Fatalf("Resolve = %v, %v; want an error", out, err)
	}
	const wantErr = `context path .: protected path "../x" is outside its context path `
	if got := err.Error(); len(got) < len(wantErr) || got[:len(wantErr)] != wantErr {
		t.Errorf("error %q, want it to start %q", got, wantErr)
	}
	if !reflect.DeepEqual(cmpView(in), cmpView(want)) {
		t.Errorf("a refused Resolve changed its input: %+v", in.Orchestrator.ContextPaths)
	}
}

// ref is a piece of memory a config value refers to: a slice's array up to its capacity, a
// map or a pointer's target.
type ref struct {
	path       string
	start, end uintptr // [start, end) for slices; start alone for maps and pointers
}

func (r ref) overlaps(s ref) bool {
	if r.end == 0 || s.end == 0 {
		return r.start == s.start
	}
	return r.start < s.end && s.start < r.end
}

// references lists every slice array, map and pointer reachable from v (strings are immutable
// and functions hold no config data: neither counts).
func references(v reflect.Value, path string) []ref {
	var out []ref
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = append(out, ref{path: path, start: v.Pointer()})
			out = append(out, references(v.Elem(), "(*"+path+")")...)
		}
	case reflect.Map:
		if !v.IsNil() {
			out = append(out, ref{path: path, start: v.Pointer()})
			for it := v.MapRange(); it.Next(); {
				out = append(out, references(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()))...)
			}
		}
	case reflect.Slice:
		if v.Cap() > 0 {
			size := v.Type().Elem().Size()
			if size == 0 {
				size = 1
			}
			start := v.Pointer()
			out = append(out, ref{path: path, start: start, end: start + uintptr(v.Cap())*size})
		}
		for i := range v.Len() {
			out = append(out, references(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Interface:
		if !v.IsNil() {
			out = append(out, references(v.Elem(), path)...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanInterface() { // unexported: read it all the same
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			out = append(out, references(f, path+"."+v.Type().Field(i).Name)...)
		}
	}
	return out
}

// scribble writes into every settable string, number and bool reachable from v, every map
// entry, and appends to every slice: what a careless reader of a config could do.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString("scribbled")
		}
	case reflect.Int, reflect.Int64:
		if v.CanSet() {
			v.SetInt(7)
		}
	case reflect.Float64:
		if v.CanSet() {
			v.SetFloat(7)
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
		if v.CanSet() {
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(it.Value().Type()).Elem()
			e.Set(it.Value())
			if e.Kind() == reflect.Interface && !e.IsNil() {
				inner := reflect.New(e.Elem().Type()).Elem()
				inner.Set(e.Elem())
				scribble(inner)
				e.Set(inner)
			} else {
				scribble(e)
			}
			v.SetMapIndex(it.Key(), e)
		}
	case reflect.Interface:
		if !v.IsNil() && v.CanSet() {
			inner := reflect.New(v.Elem().Type()).Elem()
			inner.Set(v.Elem())
			scribble(inner)
			v.Set(inner)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanInterface() { // unexported fields: the test writes Config's own
				scribble(f)
			}
		}
	}
}

// BenchmarkResolve: what a turn's set-up (or /context) pays for a config of its own.
func BenchmarkResolve(b *testing.B) {
	base := b.TempDir()
	if err := os.WriteFile(filepath.Join(base, "config.yaml"), []byte(richConfig), 0o644); err != nil {
		b.Fatal(err)
	}
	in, _, err := Load(LoadOptions{Name: "config.yaml", BaseDir: base, Home: filepath.Join(base, "home"), LookupEnv: env{}.lookup})
	if err != nil {
		b.Fatal(err)
	}
	extra := ContextPath{Path: "other", Permission: "read"}
	for b.Loop() {
		if _, err := Resolve(in, Inputs{BaseDir: base, ContextPaths: []ContextPath{extra}}); err != nil {
			b.Fatal(err)
		}
	}
}
