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

	aliased map[*yaml.Node]bool // alias targets being walked by index (an alias may contain itself)
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
func followAlias(active *map[*yaml.Node]bool, n *yaml.Node) (target *yaml.Node, done func(), ok bool) {
	if n == nil || n.Kind != yaml.AliasNode {
		return n, func() {}, n != nil
	}
	if *active == nil {
		*active = map[*yaml.Node]bool{}
	}
	if (*active)[n.Alias] {
		return nil, nil, false
	}
	(*active)[n.Alias] = true
	return deref(n), func() { delete(*active, n.Alias) }, true
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

// index walks the tree along the schema and records the line of every key and list item. What
// massgen does with each key is checkKeys's business (keycheck.go).
func (d *document) index(n *yaml.Node, t reflect.Type, path string) {
	n, done, ok := followAlias(&d.aliased, n)
	if !ok {
		return
	}
	defer done()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return // the decoder reports the type mismatch
		}
		fields, inline := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" { // YAML merge key
				d.index(v, t, path)
				continue
			}
			p := joinPath(path, k.Value)
			d.lines[p] = k.Line
			if ft, ok := fields[k.Value]; ok {
				d.index(v, ft, p)
			} else if inline {
				d.indexAny(v, p)
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.lines[p] = item.Line
			d.index(item, t.Elem(), p)
		}
	case reflect.Map, reflect.Interface:
		d.indexAny(n, path)
	}
}

// indexAny records the lines of a value the schema does not type (Extra keys such as
// orchestrator.coordination), so findings about its keys have lines too.
func (d *document) indexAny(n *yaml.Node, path string) {
	n, done, ok := followAlias(&d.aliased, n)
	if !ok {
		return
	}
	defer done()
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Value == "<<" {
				d.indexAny(n.Content[i+1], path)
				continue
			}
			p := joinPath(path, k.Value)
			d.lines[p] = k.Line
			d.indexAny(n.Content[i+1], p)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.lines[p] = item.Line
			d.indexAny(item, p)
		}
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
// first refusal, without a line).
func (d *document) checkWords(n *yaml.Node, t reflect.Type, path string, add func(Problem)) {
	n, done, ok := followAlias(&d.aliased, n)
	if !ok {
		return
	}
	defer done()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		fields, _ := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				d.checkWords(v, t, path, add)
				continue
			}
			if ft, ok := fields[k.Value]; ok {
				d.checkWord(k, v, ft, joinPath(path, k.Value), add)
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			d.checkWord(item, item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), add)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			d.checkWord(k, n.Content[i+1], t.Elem(), joinPath(path, k.Value), add)
		}
	}
}

// checkWord checks the value v (at key k) of type t: a word when t decodes itself, else the
// values below it.
func (d *document) checkWord(k, v *yaml.Node, t reflect.Type, path string, add func(Problem)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !reflect.PointerTo(t).Implements(textUnmarshaler) {
		d.checkWords(v, t, path, add)
		return
	}
	s := deref(v)
	if s == nil || s.Kind != yaml.ScalarNode || s.Tag == "!!null" {
		return // the decoder reports a mapping or list where a word belongs
	}
	u := reflect.New(t).Interface().(encoding.TextUnmarshaler)
	if err := u.UnmarshalText([]byte(s.Value)); err != nil {
		add(Problem{File: d.file, Line: k.Line, Key: path, Message: path + ": " + err.Error()})
		s.Value, s.Tag, s.Style = "", "!!str", 0
	}
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
