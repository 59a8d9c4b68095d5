package configs

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// aliasBudget bounds the work of every walk over one document that follows aliases. A small
// file can name an alias that names aliases ("billion laughs": a 1 KB file expanding to 10^9
// nodes), so each walker that follows an alias pays for the nodes it brings in, from one
// allowance per document, as yaml.v3's decoder refuses "excessive aliasing". The allowance is a
// multiple of the document's own nodes (anchors and merge keys used as configs use them cost a
// few times the file at most), with a floor for small files and a fixed cap.
type aliasBudget struct {
	file  string
	limit int // nodes the walks may bring in through aliases
	left  int
	sizes map[*yaml.Node]int // nodes of an alias target, not following the aliases inside it
	depth int                // aliases being followed, one inside the other (walks are one at a time)
	outer *yaml.Node         // the outermost of them: where the document's own tree met an alias
	err   *Problem           // the first alias refused; every walk stops once it is set
}

const (
	aliasNodesPerNode = 32      // allowance per node of the document
	aliasNodesMin     = 50_000  // allowance of any document
	aliasNodesMax     = 2 << 20 // allowance of the largest documents
)

// newAliasBudget sizes the allowance for the document root.
func newAliasBudget(file string, root *yaml.Node) *aliasBudget {
	b := &aliasBudget{file: file, sizes: map[*yaml.Node]int{}}
	b.limit = min(max(aliasNodesPerNode*b.size(root), aliasNodesMin), aliasNodesMax)
	b.left = b.limit
	return b
}

// size counts n's nodes, not following aliases (each alias is one node).
func (b *aliasBudget) size(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	if s, ok := b.sizes[n]; ok {
		return s
	}
	s := 1
	for _, c := range n.Content {
		s += b.size(c)
	}
	b.sizes[n] = s
	return s
}

// follow pays for walking the target of alias: false (and the budget spent for every walk of
// the document) once the document's allowance is exceeded. A walk that followed calls leave
// when done with the target. The Problem names the outermost alias being followed: the one in
// the document's own tree whose expansion is too large.
func (b *aliasBudget) follow(alias *yaml.Node) bool {
	if b == nil {
		return true
	}
	if b.err != nil {
		return false
	}
	b.left -= b.size(alias.Alias)
	if b.left < 0 {
		at := b.outer
		if b.depth == 0 {
			at = alias
		}
		b.err = &Problem{File: b.file, Line: at.Line, Message: fmt.Sprintf(
			"alias *%s expands to more than %d nodes (aliases nested in aliases); refused", at.Value, b.limit)}
		return false
	}
	if b.depth == 0 {
		b.outer = alias
	}
	b.depth++
	return true
}

// leave ends the walk of an alias follow allowed.
func (b *aliasBudget) leave() {
	if b != nil {
		b.depth--
	}
}
