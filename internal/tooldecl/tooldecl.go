// Package tooldecl is the kit massgen's tools are declared with, one file per tool (crush's
// internal/agent/tools shape): a typed parameter struct whose field tags are both the JSON schema
// the model sees and, for each argument naming a path, the access the permission engine judges it
// by; the description (embedded from the tool's .md); the flags; and the functions that summarise
// a call for the user and preview what it would change. One generic adapter (Decl.Bind) fills the
// struct from a call's arguments, decoded from JSON once (Decode).
//
// Field tags:
//
//	json:"name"           the argument's name (required on every exported field; "-" skips it)
//	description:"..."     what the model is told; a path argument without one gets PathDescription
//	required:"true"       listed as required; a call without it is refused, and a string or list
//	                      given empty is too, unless empty:"ok" (an empty path: the workspace)
//	access:"read"         a path argument (string, or []string for a list): read, write or delete;
//	                      access:"command" marks the shell command the tool runs (named "command")
//	readIf:"dryRun"       the path is only read when that boolean argument is true
//	enum:"true"           the values allowed, comma-separated
//	type:"object"         the schema type of a json.RawMessage field
//
// Field types: string, bool, int (and pointers to them, nil when not given), []string,
// json.RawMessage, and any type whose pointer implements Binder (its schema follows its Go type:
// a slice of structs is an array of objects).
package tooldecl

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"text/template"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// PathDescription describes a path argument whose tag says nothing else.
const PathDescription = "Absolute path, or relative to your workspace."

// Def is what a tool's file declares besides its parameter struct P.
type Def[P any] struct {
	Name string
	// Description is what the model reads (the tool's embedded .md); surrounding space is cut.
	Description string
	// Order places the tool in every list of tools (the model's, `tools list`, the docs).
	Order int
	// OnlyAdds: a tool that writes but never replaces or removes anything (MCP: not destructive).
	OnlyAdds bool
	// Cancellable: stopping the run cancels a call (commands); otherwise the call finishes what
	// it started (a file operation is never left half done).
	Cancellable bool
	// Open: the schema does not forbid other properties (MassGen declares some workflow tools so).
	Open bool
	// MassGenAction: MassGen 0.1.97's backend.permissions has an action of this tool's name
	// (read_file(P), write_file(P)); massgen maps it onto the permission engine's class the
	// declaration puts the tool in (filesystem.MassGenActions).
	MassGenAction bool
	// Lenient binds as MassGen reads its workflow calls: a missing, empty or unknown argument is
	// no error (the handler judges what it got); a value of the wrong type still is.
	Lenient bool
	// Summary is what a call's one-line summary shows after the tool's name and path arguments,
	// such as " (38 B)" (see Notes). It gets the arguments bound as far as they bind.
	Summary func(P) string
	// Preview is what a call would change, for the permission prompt ("" for nothing to show);
	// paths are the canonical paths the decision found, in the order of the path arguments. It
	// is asked only for arguments that bind.
	Preview func(p P, paths []string) string
}

// Binder is implemented by an argument type that reads its own value: v is what the JSON held
// (nil when the argument is absent or null).
type Binder interface {
	BindArg(v any) error
}

// Tool is a declaration without its parameter type: what the lists, the schemas, the permission
// engine, the summaries and the previews read.
type Tool interface {
	Name() string
	Description() string
	Order() int
	// MassGenAction: MassGen's backend.permissions has an action of the tool's name (Def).
	MassGenAction() bool
	// Schema is the JSON schema of the arguments (a new map on every call).
	Schema() map[string]any
	// Decl is what the permission engine knows of the tool: its path arguments and flags.
	Decl() toolargs.Tool
	// Writes: some path argument is written or deleted (hidden from an agent that may write
	// nowhere).
	Writes() bool
	// ReadOnly: the tool changes nothing, no path written or deleted, no command (MCP's
	// readOnlyHint).
	ReadOnly() bool
	// Destructive: the tool may overwrite or remove what exists (MCP's destructiveHint): every
	// tool that is not read-only, unless it only adds.
	Destructive() bool
	// Params are the arguments in declaration order.
	Params() []Param
	// Details is the declaration's summary of a call (Def.Summary) for arguments as decoded.
	Details(args map[string]any) string
	// Preview is the declaration's preview of a call (Def.Preview); "" when the arguments do not
	// bind or the tool has nothing to preview.
	Preview(args map[string]any, paths []string) string
}

// Param is one argument as declared: its name, and for a list of objects their properties.
type Param struct {
	Name     string
	Required bool
	Items    []string
}

// Decl is a tool declared with parameters P.
type Decl[P any] struct {
	def    Def[P]
	fields []field
	decl   toolargs.Tool
}

type fieldKind uint8

const (
	kString fieldKind = iota
	kBool
	kInt
	kStrings
	kRaw
	kBinder
)

// field is one argument of a parameter struct, read from its tags once.
type field struct {
	index    int
	name     string
	desc     string
	kind     fieldKind
	ptr      bool
	required bool
	emptyOK  bool
	access   string
	readIf   string
	enum     []any
	typ      reflect.Type // the field's Go type (its schema for a Binder)
	schemaTy string       // type:"..." for json.RawMessage
}

var (
	rawType    = reflect.TypeFor[json.RawMessage]()
	binderType = reflect.TypeFor[Binder]()
)

// New reads P's tags into a declaration. A malformed declaration is a programming error: New
// panics, when the tool's package is initialised, naming the tool and the field.
func New[P any](def Def[P]) *Decl[P] {
	def.Description = strings.TrimSpace(def.Description)
	if def.Name == "" || def.Description == "" {
		panic(fmt.Sprintf("tooldecl: tool %q: a tool needs a name and a description", def.Name))
	}
	fields, err := fieldsOf(reflect.TypeFor[P]())
	if err != nil {
		panic(fmt.Sprintf("tooldecl: tool %s: %v", def.Name, err))
	}
	d := &Decl[P]{def: def, fields: fields}
	d.decl = toolargs.Tool{Name: def.Name, Cancellable: def.Cancellable}
	for _, f := range fields {
		switch f.access {
		case "":
		case "command":
			d.decl.Command = true
		default:
			d.decl.Args = append(d.decl.Args, toolargs.Arg{Name: f.name, Access: accessOf(f.access),
				List: f.kind == kStrings, Optional: !f.required, ReadIf: f.readIf})
		}
	}
	return d
}

func accessOf(s string) toolargs.Access {
	switch s {
	case "write":
		return toolargs.Write
	case "delete":
		return toolargs.Delete
	}
	return toolargs.Read
}

func fieldsOf(t reflect.Type) ([]field, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("parameters must be a struct, not %s", t)
	}
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("field %s has no json name", sf.Name)
		}
		f := field{index: i, name: name, desc: sf.Tag.Get("description"), typ: sf.Type,
			access: sf.Tag.Get("access"), readIf: sf.Tag.Get("readIf"), schemaTy: sf.Tag.Get("type")}
		switch r := sf.Tag.Get("required"); r {
		case "true":
			f.required = true
		case "":
		default:
			return nil, fmt.Errorf("field %s: required:%q (want \"true\")", sf.Name, r)
		}
		f.emptyOK = sf.Tag.Get("empty") == "ok"
		ft := sf.Type
		switch {
		case reflect.PointerTo(ft).Implements(binderType):
			f.kind = kBinder
		case ft == rawType:
			f.kind = kRaw
			if f.schemaTy == "" {
				return nil, fmt.Errorf("field %s: a json.RawMessage needs a type tag", sf.Name)
			}
		default:
			if ft.Kind() == reflect.Pointer {
				f.ptr, ft = true, ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.String:
				f.kind = kString
			case ft.Kind() == reflect.Bool:
				f.kind = kBool
			case ft.Kind() == reflect.Int:
				f.kind = kInt
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String && !f.ptr:
				f.kind = kStrings
			default:
				return nil, fmt.Errorf("field %s: unsupported type %s", sf.Name, sf.Type)
			}
		}
		switch f.access {
		case "", "read", "write", "delete":
			if f.access != "" && f.kind != kString && f.kind != kStrings {
				return nil, fmt.Errorf("field %s: a path argument is a string or a list of strings", sf.Name)
			}
			if f.access != "" && f.ptr {
				return nil, fmt.Errorf("field %s: a path argument is not a pointer", sf.Name)
			}
		case "command":
			if f.name != "command" || f.kind != kString {
				return nil, fmt.Errorf("field %s: the command argument is a string named \"command\"", sf.Name)
			}
		default:
			return nil, fmt.Errorf("field %s: access:%q (want read, write, delete or command)", sf.Name, f.access)
		}
		if f.access == "" && f.readIf != "" {
			return nil, fmt.Errorf("field %s: readIf on an argument that is not a path", sf.Name)
		}
		if f.desc == "" && (f.access == "read" || f.access == "write" || f.access == "delete") && f.kind == kString {
			f.desc = PathDescription
		}
		if e := sf.Tag.Get("enum"); e != "" {
			for _, v := range strings.Split(e, ",") {
				switch f.kind {
				case kBool:
					f.enum = append(f.enum, v == "true")
				case kString:
					f.enum = append(f.enum, v)
				default:
					return nil, fmt.Errorf("field %s: enum on a %s", sf.Name, sf.Type)
				}
			}
		}
		if slices.ContainsFunc(out, func(g field) bool { return g.name == f.name }) {
			return nil, fmt.Errorf("argument %q declared twice", f.name)
		}
		out = append(out, f)
	}
	for _, f := range out {
		if f.readIf == "" {
			continue
		}
		if !slices.ContainsFunc(out, func(g field) bool { return g.name == f.readIf && g.kind == kBool }) {
			return nil, fmt.Errorf("argument %s: readIf %q names no boolean argument", f.name, f.readIf)
		}
	}
	return out, nil
}

func (d *Decl[P]) Name() string        { return d.def.Name }
func (d *Decl[P]) Description() string { return d.def.Description }
func (d *Decl[P]) Order() int          { return d.def.Order }
func (d *Decl[P]) MassGenAction() bool { return d.def.MassGenAction }

// Decl returns a copy: callers may not change the declaration.
func (d *Decl[P]) Decl() toolargs.Tool {
	t := d.decl
	t.Args = slices.Clone(d.decl.Args)
	return t
}

func (d *Decl[P]) Writes() bool      { return d.decl.Destructive() }
func (d *Decl[P]) ReadOnly() bool    { return !d.decl.Destructive() && !d.decl.Command }
func (d *Decl[P]) Destructive() bool { return !d.ReadOnly() && !d.def.OnlyAdds }

func (d *Decl[P]) Params() []Param {
	out := make([]Param, len(d.fields))
	for i, f := range d.fields {
		out[i] = Param{Name: f.name, Required: f.required}
		if f.kind == kBinder && f.typ.Kind() == reflect.Slice && f.typ.Elem().Kind() == reflect.Struct {
			items, _ := fieldsOf(f.typ.Elem())
			for _, it := range items {
				out[i].Items = append(out[i].Items, it.name)
			}
		}
	}
	return out
}

// Schema is the arguments' JSON schema: an object of the declared properties, the required ones
// listed, no others allowed (unless Def.Open).
func (d *Decl[P]) Schema() map[string]any { return objectSchema(d.fields, d.def.Open) }

func objectSchema(fields []field, open bool) map[string]any {
	props := make(map[string]any, len(fields))
	required := []string{}
	for _, f := range fields {
		props[f.name] = f.schema()
		if f.required {
			required = append(required, f.name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "required": required}
	if !open {
		s["additionalProperties"] = false
	}
	return s
}

func (f field) schema() map[string]any {
	var s map[string]any
	switch f.kind {
	case kString:
		s = map[string]any{"type": "string"}
	case kBool:
		s = map[string]any{"type": "boolean"}
	case kInt:
		s = map[string]any{"type": "integer"}
	case kStrings:
		s = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	case kRaw:
		s = map[string]any{"type": f.schemaTy}
	case kBinder:
		s = typeSchema(f.typ)
	}
	if f.desc != "" {
		s["description"] = f.desc
	}
	if len(f.enum) > 0 {
		s["enum"] = f.enum
	}
	return s
}

// typeSchema is the schema of a Binder's Go type: a slice of structs is an array of closed
// objects, a struct a closed object.
func typeSchema(t reflect.Type) map[string]any {
	switch t.Kind() {
	case reflect.Slice:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem())}
	case reflect.Struct:
		fields, err := fieldsOf(t)
		if err != nil {
			panic(fmt.Sprintf("tooldecl: %s: %v", t, err))
		}
		return objectSchema(fields, false)
	case reflect.String:
		return map[string]any{"type": "string"}
	}
	panic(fmt.Sprintf("tooldecl: no schema for %s", t))
}

// SetEnum restricts a string property of schema (as Schema returned it) to values: for
// arguments whose values are known only when the tool is offered (vote's agent ids).
func SetEnum(schema map[string]any, prop string, values []string) {
	props, _ := schema["properties"].(map[string]any)
	if p, ok := props[prop].(map[string]any); ok {
		p["enum"] = slices.Clone(values)
	}
}

// Bind fills P from a call's arguments. It binds every argument it can and returns the first
// problem: an unknown argument (unless Lenient), a required one missing or empty, a value of
// the wrong type. Values are read as models send them: a boolean may come as "true" or "yes",
// an integer as "3", a list of one string as that string.
func (d *Decl[P]) Bind(args map[string]any) (P, error) {
	var p P
	v := reflect.ValueOf(&p).Elem()
	var first error
	note := func(err error) {
		if first == nil {
			first = err
		}
	}
	lenient := d.def.Lenient
	if !lenient {
		note(d.unknown(args))
	}
	for _, f := range d.fields {
		raw := args[f.name]
		fv := v.Field(f.index)
		if f.kind == kBinder {
			note(fv.Addr().Interface().(Binder).BindArg(raw))
			continue
		}
		if raw == nil {
			if f.required && !lenient {
				note(fmt.Errorf("missing argument %q", f.name))
			}
			continue
		}
		val, err := f.convert(raw)
		if err != nil {
			note(err)
			continue
		}
		if !lenient && f.required && !f.emptyOK && f.empty(val) {
			note(fmt.Errorf("argument %q is empty", f.name))
		}
		if f.ptr {
			ptr := reflect.New(fv.Type().Elem())
			ptr.Elem().Set(reflect.ValueOf(val).Convert(fv.Type().Elem()))
			fv.Set(ptr)
		} else {
			fv.Set(reflect.ValueOf(val).Convert(fv.Type()))
		}
	}
	return p, first
}

// BindJSON decodes a call's arguments (Decode) and binds them: for callers that hold the raw
// JSON and nothing else reads it (the orchestrator's workflow calls).
func (d *Decl[P]) BindJSON(raw json.RawMessage) (P, error) {
	a := Decode(raw)
	if a.Err != nil {
		var zero P
		return zero, fmt.Errorf("arguments are not a JSON object: %w", a.Err)
	}
	return d.Bind(a.Map)
}

// unknown refuses arguments the tool does not declare.
func (d *Decl[P]) unknown(args map[string]any) error {
	var extra []string
	for k := range args {
		if !slices.ContainsFunc(d.fields, func(f field) bool { return f.name == k }) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	valid := make([]string, len(d.fields))
	for i, f := range d.fields {
		valid[i] = f.name
	}
	slices.Sort(valid)
	return fmt.Errorf("unexpected argument(s) %s (valid: %s)", strings.Join(extra, ", "), strings.Join(valid, ", "))
}

func (f field) empty(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x) == ""
	case []string:
		return len(x) == 0
	}
	return false
}

// convert reads one argument's value (never nil) as the field's kind.
func (f field) convert(raw any) (any, error) {
	switch f.kind {
	case kString:
		s, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("argument %q must be a string, got %T", f.name, raw)
		}
		return s, nil
	case kBool:
		switch x := raw.(type) {
		case bool:
			return x, nil
		case string:
			switch strings.ToLower(x) {
			case "true", "yes", "1":
				return true, nil
			case "false", "no", "0", "":
				return false, nil
			}
		}
		return nil, fmt.Errorf("argument %q must be a boolean, got %v", f.name, raw)
	case kInt:
		switch x := raw.(type) {
		case float64:
			if x == math.Trunc(x) && math.Abs(x) <= 1e9 {
				return int(x), nil
			}
		case int:
			if x >= -1e9 && x <= 1e9 {
				return x, nil
			}
		case string:
			var n int
			if _, err := fmt.Sscan(x, &n); err == nil {
				return n, nil
			}
		}
		return nil, fmt.Errorf("argument %q must be an integer, got %v", f.name, raw)
	case kStrings:
		switch x := raw.(type) {
		case string: // a single path or pattern given as a string
			return []string{x}, nil
		case []string:
			return slices.Clone(x), nil
		case []any:
			out := make([]string, 0, len(x))
			for i, e := range x {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("argument %s[%d] must be a string, got %T", f.name, i, e)
				}
				out = append(out, s)
			}
			return out, nil
		}
		return nil, fmt.Errorf("argument %q must be a list of strings, got %T", f.name, raw)
	case kRaw:
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", f.name, err)
		}
		return json.RawMessage(b), nil
	}
	return nil, fmt.Errorf("argument %q: unsupported", f.name)
}

// Details binds what binds and asks the declaration's Summary.
func (d *Decl[P]) Details(args map[string]any) string {
	if d.def.Summary == nil {
		return ""
	}
	p, _ := d.Bind(args)
	return d.def.Summary(p)
}

// Preview asks the declaration's Preview when the arguments bind.
func (d *Decl[P]) Preview(args map[string]any, paths []string) string {
	if d.def.Preview == nil {
		return ""
	}
	p, err := d.Bind(args)
	if err != nil {
		return ""
	}
	return d.def.Preview(p, paths)
}

// Render fills a description's {{.Field}} placeholders (limits stated once, in Go). A template
// that does not render is a programming error: Render panics.
func Render(text string, data any) string {
	t, err := template.New("").Option("missingkey=error").Parse(text)
	if err != nil {
		panic(fmt.Sprintf("tooldecl: description template: %v", err))
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		panic(fmt.Sprintf("tooldecl: description template: %v", err))
	}
	return b.String()
}
