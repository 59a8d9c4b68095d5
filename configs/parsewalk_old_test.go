package configs

import (
	"encoding"
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"
)

// The two walks parse.go made before they became one (walk): index (the lines of every key)
// and checkWords (the vocabularies), kept as they were so TestSchemaWalkAsBefore and
// FuzzSchemaWalk can hold the one walk to what they did.

func (d *document) oldIndex(n *yaml.Node, t reflect.Type, path string) {
	n, done, ok := followAlias(nil, &d.aliased, n)
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
				d.oldIndex(v, t, path)
				continue
			}
			p := joinPath(path, k.Value)
			d.lines[p] = k.Line
			if ft, ok := fields[k.Value]; ok {
				d.oldIndex(v, ft, p)
			} else if inline {
				d.oldIndexAny(v, p)
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.lines[p] = item.Line
			d.oldIndex(item, t.Elem(), p)
		}
	case reflect.Map, reflect.Interface:
		d.oldIndexAny(n, path)
	}
}

// indexAny records the lines of a value the schema does not type (Extra keys such as
// orchestrator.coordination), so findings about its keys have lines too.
func (d *document) oldIndexAny(n *yaml.Node, path string) {
	n, done, ok := followAlias(nil, &d.aliased, n)
	if !ok {
		return
	}
	defer done()
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Value == "<<" {
				d.oldIndexAny(n.Content[i+1], path)
				continue
			}
			p := joinPath(path, k.Value)
			d.lines[p] = k.Line
			d.oldIndexAny(n.Content[i+1], p)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.lines[p] = item.Line
			d.oldIndexAny(item, p)
		}
	}
}

func (d *document) oldCheckWords(n *yaml.Node, t reflect.Type, path string, add func(Problem)) {
	n, done, ok := followAlias(nil, &d.aliased, n)
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
				d.oldCheckWords(v, t, path, add)
				continue
			}
			if ft, ok := fields[k.Value]; ok {
				d.oldCheckWord(k, v, ft, joinPath(path, k.Value), add)
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			d.oldCheckWord(item, item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), add)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			d.oldCheckWord(k, n.Content[i+1], t.Elem(), joinPath(path, k.Value), add)
		}
	}
}

// checkWord checks the value v (at key k) of type t: a word when t decodes itself, else the
// values below it.
func (d *document) oldCheckWord(k, v *yaml.Node, t reflect.Type, path string, add func(Problem)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !reflect.PointerTo(t).Implements(textUnmarshaler) {
		d.oldCheckWords(v, t, path, add)
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
