package configs

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// document is one parsed config file: its YAML node tree (kept for line numbers) and the lines
// of every key and list item, by path ("agents[1].backend.type").
type document struct {
	file  string
	root  *yaml.Node // the top-level mapping
	lines map[string]int

	aliased map[*yaml.Node]bool // alias targets being walked (an alias may contain itself)
	budget  *aliasBudget        // what the walks may expand through aliases (aliases)

	// walked is where index's walk began, refused the words it refused (checkWords reports them).
	walked  walkStart
	refused []Problem
	// blanked holds the value of each word checkWord refused (and blanked), for the lines.
	blanked map[*yaml.Node]string
	fields  map[reflect.Type]schemaFields // fieldsOf
}

// lineOf returns the line of path, or of its nearest ancestor that has one.
func (d *document) lineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := d.lines[p]; ok {
			return l
		}
	}
	return 0
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i <= 0 {
		return ""
	}
	return p[:i]
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// parseDocument parses data into a node tree. Syntax errors come back as a *ValidationError
// naming file and line.
func parseDocument(file string, data []byte) (*document, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if err.Error() == "EOF" {
			return nil, &ValidationError{Problems: []Problem{{File: file, Message: "empty config (expected agents: or agent:)"}}}
		}
		return nil, &ValidationError{Problems: []Problem{syntaxProblem(file, data, err)}}
	}
	if len(doc.Content) == 0 {
		return nil, &ValidationError{Problems: []Problem{{File: file, Message: "empty config (expected agents: or agent:)"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &ValidationError{Problems: []Problem{{File: file, Line: root.Line,
			Message: fmt.Sprintf("the config must be a mapping with agents:/agent:, found %s", kindName(root))}}}
	}
	d := &document{file: file, root: root, lines: map[string]int{}}
	return d, nil
}

// yamlProblem turns a yaml.v3 message ("yaml: line 3: mapping values are not allowed in this
// context") into a Problem.
func yamlProblem(file, msg string) Problem {
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return Problem{File: file, Line: n, Message: m[2]}
	}
	return Problem{File: file, Line: 1, Message: msg}
}

// syntaxProblem reports a YAML syntax error. yaml.v3 often names the line where the enclosing
// block started ("line 1: did not find expected key") rather than the faulty line, so the
// faulty line is found as the shortest prefix of the text (in whole lines) that fails with the
// same message.
func syntaxProblem(file string, data []byte, err error) Problem {
	p := yamlProblem(file, err.Error())
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(data) > 32<<10 { // keep the search cheap on huge inputs
		return p
	}
	var prefix []byte
	for i, l := range lines {
		prefix = append(prefix, l...)
		var n yaml.Node
		perr := yaml.Unmarshal(prefix, &n)
		if perr == nil {
			continue
		}
		if q := yamlProblem(file, perr.Error()); q.Message == p.Message {
			if i+1 > p.Line {
				p.Line = i + 1
			}
			return p
		}
	}
	return p
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

func mapGet(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// followAlias resolves an alias for a walk that may meet it again inside itself (an alias may
// point at a node that contains it): ok is false when the target is already being walked; done
// ends the target's walk. Other nodes come back as they are; nil is not ok.
// Following it is paid from budget (nil: unbounded, for trees massgen made itself): not ok once
// the document's allowance is spent.
func followAlias(budget *aliasBudget, active *map[*yaml.Node]bool, n *yaml.Node) (target *yaml.Node, done func(), ok bool) {
	if n == nil || n.Kind != yaml.AliasNode {
		return n, func() {}, n != nil
	}
	if *active == nil {
		*active = map[*yaml.Node]bool{}
	}
	if (*active)[n.Alias] || !budget.follow(n) {
		return nil, nil, false
	}
	(*active)[n.Alias] = true
	return deref(n), func() { delete(*active, n.Alias); budget.leave() }, true
}

// aliases is the document's alias budget, sized on first use (after normalize, which reshapes
// the tree) and shared by every walk that follows aliases.
func (d *document) aliases() *aliasBudget {
	if d.budget == nil {
		d.budget = newAliasBudget(d.file, d.root)
	}
	return d.budget
}

// aliasProblem is the alias that spent the document's budget, if one did: the walks stopped
// there, so nothing found from the tree can be trusted to be complete.
func (d *document) aliasProblem() error {
	if d.budget == nil || d.budget.err == nil {
		return nil
	}
	return &ValidationError{Problems: []Problem{*d.budget.err}}
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// normalize rewrites MassGen's alternative spellings into the one our schema decodes:
// a single `agent:` becomes `agents: [ ... ]`, and `mcp_servers:` given as a mapping
// (name -> server) becomes a list with `name:` set.
func (d *document) normalize() []Problem {
	var probs []Problem
	ak, av := mapGet(d.root, "agent")
	sk, _ := mapGet(d.root, "agents")
	switch {
	case ak != nil && sk != nil:
		probs = append(probs, Problem{File: d.file, Line: ak.Line, Message: "both agent: and agents: are set; use one"})
	case ak != nil:
		ak.Value = "agents"
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: av.Line, Column: av.Column, Content: []*yaml.Node{av}}
		for i := 0; i+1 < len(d.root.Content); i += 2 {
			if d.root.Content[i] == ak {
				d.root.Content[i+1] = seq
			}
		}
	}
	_, agents := mapGet(d.root, "agents")
	agents = deref(agents)
	if agents == nil || agents.Kind != yaml.SequenceNode {
		return probs
	}
	for _, a := range agents.Content {
		_, b := mapGet(deref(a), "backend")
		_, servers := mapGet(deref(b), "mcp_servers")
		if servers == nil || servers.Kind != yaml.MappingNode {
			continue
		}
		list := make([]*yaml.Node, 0, len(servers.Content)/2)
		for i := 0; i+1 < len(servers.Content); i += 2 {
			name, srv := servers.Content[i], deref(servers.Content[i+1])
			if srv.Kind != yaml.MappingNode {
				probs = append(probs, Problem{File: d.file, Line: srv.Line,
					Message: fmt.Sprintf("mcp_servers.%s: expected a mapping, found %s", name.Value, kindName(srv))})
				continue
			}
			if k, _ := mapGet(srv, "name"); k == nil {
				srv.Content = append([]*yaml.Node{
					{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name", Line: name.Line},
					{Kind: yaml.ScalarNode, Tag: "!!str", Value: name.Value, Line: name.Line},
				}, srv.Content...)
			}
			list = append(list, srv)
		}
		servers.Kind, servers.Tag, servers.Content = yaml.SequenceNode, "!!seq", list
	}
	return probs
}

// index walks the tree along the schema once (walk): it records the line of every key and list
// item (what massgen does with each key is checkKeys's business, keycheck.go) and checks the
// words on the way, keeping what it refused for checkWords to report.
func (d *document) index(n *yaml.Node, t reflect.Type, path string) {
	d.walked = walkStart{n: n, t: t, path: path}
	d.refused = nil
	d.walk(n, t, t, path, func(p Problem) { d.refused = append(d.refused, p) })
}

// walkStart is where index's walk began: checkWords from the same place reports what it found.
type walkStart struct {
	n    *yaml.Node
	t    reflect.Type
	path string
}

// anyType stands for a value the schema does not type (a map, an interface, the extra keys of
// an inline map): the lines of every key below it are recorded.
var anyType = reflect.TypeFor[any]()

// walk is the one walk along the schema, for its two visitors at once: lines is the schema type
// the key lines follow (anyType: every key below; nil: none), words the type along which
// values that decode themselves are checked (nil: none below). Where the two read a node
// differently (a merge key in a typed map), each goes its own way.
func (d *document) walk(n *yaml.Node, lines, words reflect.Type, path string, add func(Problem)) {
	lines, words = linesType(lines), wordsType(words)
	if lines == nil && words == nil {
		return
	}
	n, done, ok := followAlias(d.aliases(), &d.aliased, n)
	if !ok {
		return
	}
	defer done()
	switch n.Kind {
	case yaml.MappingNode:
		d.walkMapping(n, lines, words, path, add)
	case yaml.SequenceNode:
		d.walkSequence(n, lines, words, path, add)
	}
}

// linesType is what the lines visitor makes of a schema type: a struct or a slice is followed,
// a map or an interface is not typed (anyType), anything else holds no keys.
func linesType(t reflect.Type) reflect.Type {
	t = elemType(t)
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice:
		return t
	case reflect.Map, reflect.Interface:
		return anyType
	}
	return nil
}

// wordsType is what the words visitor makes of a schema type: structs, slices and maps hold
// values to check; anything else nothing.
func wordsType(t reflect.Type) reflect.Type {
	t = elemType(t)
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Map:
		return t
	}
	return nil
}

func elemType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func (d *document) walkMapping(n *yaml.Node, lines, words reflect.Type, path string, add func(Problem)) {
	linesOn := lines != nil && (lines == anyType || lines.Kind() == reflect.Struct)
	wordsOn := words != nil && words.Kind() != reflect.Slice
	if !linesOn && !wordsOn {
		return
	}
	var lineFields, wordFields map[string]reflect.Type
	inline := false
	if linesOn && lines != anyType {
		lineFields, inline = d.fieldsOf(lines)
	}
	if wordsOn && words.Kind() == reflect.Struct {
		wordFields, _ = d.fieldsOf(words)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		// Each half goes to a path with a type below this key (nil: nothing below). A merge key
		// brings its mapping's keys to this level, for a struct or an untyped value; a typed
		// map's values are checked under every key, "<<" too. The lines half reads a key as it
		// was before any word was blanked (an anchored key may be a refused word elsewhere).
		var lp, wp string
		var lt, wt reflect.Type
		if linesOn {
			key := k.Value
			if orig, ok := d.blanked[k]; ok {
				key = orig
			}
			if key == "<<" {
				lp, lt = path, lines
			} else {
				lp = joinPath(path, key)
				d.lines[lp] = k.Line
				if ft, ok := lineFields[key]; ok {
					lt = ft
				} else if lines == anyType || inline {
					lt = anyType
				}
			}
		}
		if wordsOn {
			switch {
			case words.Kind() == reflect.Map:
				wp = joinPath(path, k.Value)
				wt = d.checkWord(k, v, words.Elem(), wp, add)
			case k.Value == "<<":
				wp, wt = path, words
			default:
				wp = joinPath(path, k.Value)
				if ft, ok := wordFields[k.Value]; ok {
					wt = d.checkWord(k, v, ft, wp, add)
				}
			}
		}
		if lp == wp || lt == nil || wt == nil {
			if lt == nil {
				lp = wp
			}
			d.walk(v, lt, wt, lp, add)
			continue
		}
		d.walk(v, lt, nil, lp, add)
		d.walk(v, nil, wt, wp, add)
	}
}

// schemaFields are a struct's YAML keys (yamlFields), looked up once per type and walk.
type schemaFields struct {
	fields map[string]reflect.Type
	inline bool
}

// fieldsOf is yamlFields(t), computed once per document.
func (d *document) fieldsOf(t reflect.Type) (map[string]reflect.Type, bool) {
	if f, ok := d.fields[t]; ok {
		return f.fields, f.inline
	}
	fields, inline := yamlFields(t)
	if d.fields == nil {
		d.fields = map[reflect.Type]schemaFields{}
	}
	d.fields[t] = schemaFields{fields, inline}
	return fields, inline
}

func (d *document) walkSequence(n *yaml.Node, lines, words reflect.Type, path string, add func(Problem)) {
	linesOn := lines != nil && (lines == anyType || lines.Kind() == reflect.Slice)
	wordsOn := words != nil && words.Kind() == reflect.Slice
	for i, item := range n.Content {
		if !linesOn && !wordsOn {
			return
		}
		p := fmt.Sprintf("%s[%d]", path, i)
		var childLines, childWords reflect.Type
		if linesOn {
			d.lines[p] = item.Line
			childLines = anyType
			if lines != anyType {
				childLines = lines.Elem()
			}
		}
		if wordsOn {
			childWords = d.checkWord(item, item, words.Elem(), p, add)
		}
		d.walk(item, childLines, childWords, p, add)
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps the YAML key of each field of struct t to its type, and says whether t has
// an inline map collecting the other keys.
func yamlFields(t reflect.Type) (map[string]reflect.Type, bool) {
	fields := map[string]reflect.Type{}
	inline := false
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			if f.Type.Kind() == reflect.Struct { // an embedded struct: its keys are the parent's
				sub, subInline := yamlFields(f.Type)
				maps.Copy(fields, sub)
				inline = inline || subInline
				continue
			}
			inline = true
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields, inline
}

// decode fills cfg from the node tree. Type mismatches come back as Problems with lines.
func (d *document) decode(cfg *Config) []Problem {
	err := d.root.Decode(cfg)
	if err == nil {
		return nil
	}
	var probs []Problem
	if te, ok := err.(*yaml.TypeError); ok {
		for _, e := range te.Errors {
			probs = append(probs, yamlProblem(d.file, e))
		}
		return probs
	}
	return []Problem{yamlProblem(d.file, err.Error())}
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// checkWords decodes, along the schema, every scalar whose field type decodes itself (the
// vocabularies of internal/vocab: modes, levels, permissions) and reports each one it refuses
// at its key's line, with the words known. The refused value is blanked in the tree, so the
// decoder goes on and the other problems of the file are found too (yaml.v3 would stop at the
// first refusal, without a line). After index from the same place, its walk checked them
// already: what it refused is reported; otherwise (a file without a key table) the words are
// walked for alone.
func (d *document) checkWords(n *yaml.Node, t reflect.Type, path string, add func(Problem)) {
	if d.walked == (walkStart{n: n, t: t, path: path}) && n != nil {
		for _, p := range d.refused {
			add(p)
		}
		d.walked, d.refused = walkStart{}, nil
		return
	}
	d.walk(n, nil, t, path, add)
}

// checkWord checks the value v (at key k) of type t when t decodes itself, and returns nil;
// else it returns the type the words below v are checked along.
func (d *document) checkWord(k, v *yaml.Node, t reflect.Type, path string, add func(Problem)) reflect.Type {
	t = elemType(t)
	if !reflect.PointerTo(t).Implements(textUnmarshaler) {
		return t
	}
	s := deref(v)
	if s == nil || s.Kind != yaml.ScalarNode || s.Tag == "!!null" {
		return nil // the decoder reports a mapping or list where a word belongs
	}
	u := reflect.New(t).Interface().(encoding.TextUnmarshaler)
	if err := u.UnmarshalText([]byte(s.Value)); err != nil {
		add(Problem{File: d.file, Line: k.Line, Key: path, Message: path + ": " + err.Error()})
		if d.blanked == nil {
			d.blanked = map[*yaml.Node]string{}
		}
		if _, ok := d.blanked[s]; !ok {
			d.blanked[s] = s.Value
		}
		s.Value, s.Tag, s.Style = "", "!!str", 0
	}
	return nil
}

// DecodeStrict decodes a YAML file of massgen's own that has no key table (such as
// .massgen/permissions.yaml) into out: an unknown key is an error (the decoder's), and a value
// outside its vocabulary is reported as in a config, with file:line and the words known (a
// *ValidationError). An empty file leaves out as it is.
func DecodeStrict(file string, data []byte, out any) error {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) == nil && len(doc.Content) > 0 { // a syntax error: the decoder says it
		d := &document{file: file, root: doc.Content[0]}
		var probs []Problem
		d.checkWords(d.root, reflect.TypeOf(out), "", func(p Problem) { probs = append(probs, p) })
		if err := d.aliasProblem(); err != nil {
			return err
		}
		if len(probs) > 0 {
			return &ValidationError{Problems: probs}
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
