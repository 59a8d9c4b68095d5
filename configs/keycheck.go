package configs

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen/internal/fuzzy"
)

// keyFinding is a key the key table does not call implemented: unknown, ignored or refused.
type keyFinding struct {
	path       string     // concrete: agents[0].backend.temprature
	key        *yaml.Node // the key's node: its line, or where `configs show --resolved` comments
	status     Status     // Ignored, Refused, or "" for a key the table does not know
	detail     string     // "ignored (claude backend): what happens instead", "refused: why"
	message    string     // path + ": " + detail, or "unknown key ..."
	suggestion string     // for unknown keys: the key probably meant ("temperature")
}

// checkKeys walks a config's node tree (after normalize: agents is a list, mcp_servers lists)
// along the key table and reports every key that is not implemented. Children of ignored,
// refused and open keys are not walked: the finding on the parent covers them.
// Aliases are paid from budget (nil for a tree massgen encoded itself, which has none).
func checkKeys(root *yaml.Node, budget *aliasBudget, report func(keyFinding)) {
	w := keyWalker{report: report, budget: budget}
	w.value(root, "", "", "")
}

type keyWalker struct {
	report func(keyFinding)
	budget *aliasBudget
	active map[*yaml.Node]bool // alias targets being walked (an alias may contain itself)
}

// value walks a mapping, or the mappings of a list, found at canon/path.
func (w *keyWalker) value(n *yaml.Node, canon, path, btype string) {
	n, done, ok := followAlias(w.budget, &w.active, n)
	if !ok {
		return
	}
	defer done()
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			w.value(c, canon, path, btype)
		}
	case yaml.MappingNode:
		w.mapping(n, canon, path, btype)
	case yaml.SequenceNode:
		for i, item := range n.Content {
			w.value(item, canon+"[]", fmt.Sprintf("%s[%d]", path, i), btype)
		}
	}
}

func (w *keyWalker) mapping(n *yaml.Node, canon, path, btype string) {
	if canon == "agents[].backend" {
		if _, tv := mapGet(n, "type"); deref(tv) != nil {
			btype = deref(tv).Value
		}
		// A type the backends cannot build (or no type) is reported by validate; its keys
		// belong to another schema (AG2's agent_config, ...).
		if backendFamily(btype) == "" {
			return
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" { // YAML merge key: its mapping(s) belong here
			if dv := deref(v); dv != nil && dv.Kind == yaml.SequenceNode {
				for _, m := range dv.Content {
					w.value(m, canon, path, btype)
				}
			} else {
				w.value(v, canon, path, btype)
			}
			continue
		}
		kc, kp := joinPath(canon, k.Value), joinPath(path, k.Value)
		entry, ok := lookupCanon(kc, btype)
		if !ok {
			w.report(unknownKey(kp, k, canon, btype))
			continue
		}
		where := "ignored"
		if len(entry.On) > 0 && btype != "" {
			where = fmt.Sprintf("ignored (%s backend)", btype)
		}
		switch entry.Status {
		case Refused:
			detail := "refused: " + entry.Note
			w.report(keyFinding{path: kp, key: k, status: Refused, detail: detail, message: kp + ": " + detail})
		case Ignored:
			if !sameValue(entry, v) {
				detail := where + ": " + entry.Note
				w.report(keyFinding{path: kp, key: k, status: Ignored, detail: detail, message: kp + ": " + detail})
			}
		default:
			if !entry.Open {
				w.value(v, kc, kp, btype)
			}
		}
	}
}

// lookupCanon is LookupKey for a path that is already canonical.
func lookupCanon(canon, btype string) (Key, bool) {
	if k, ok := lookupExact(canon, btype); ok {
		return k, true
	}
	parent, _ := splitKeyPath(canon)
	return lookupExact(parent+".*", btype)
}

// sameValue reports whether an ignored key's value asks for what massgen does anyway.
func sameValue(k Key, v *yaml.Node) bool {
	v = deref(v)
	if v == nil || v.Kind != yaml.ScalarNode {
		return false
	}
	return slices.Contains(k.Same, strings.ToLower(strings.TrimSpace(v.Value)))
}

// unknownKey reports a key the table does not know, with the known key it most likely meant:
// a sibling a typo or two away ("modle" -> "model"), or the same key one level down
// ("agents[0].temperature" -> "backend.temperature").
func unknownKey(path string, k *yaml.Node, parentCanon, btype string) keyFinding {
	f := keyFinding{path: path, key: k}
	if s := suggest(k.Value, siblingKeys(parentCanon, btype)); s != "" {
		f.suggestion = s
	} else {
		for _, child := range keyChildren[parentCanon] {
			if _, ok := lookupCanon(joinPath(parentCanon, child)+"."+k.Value, btype); ok && child != "*" {
				f.suggestion = child + "." + k.Value
				break
			}
		}
	}
	f.message = fmt.Sprintf("unknown key %q (not used)", path)
	if f.suggestion != "" {
		f.message = fmt.Sprintf("unknown key %q (not used; did you mean %q?)", path, f.suggestion)
	}
	return f
}

// Suggest returns the candidate closest to word within a few typos, or "" (for "did you mean").
func Suggest(word string, candidates []string) string { return suggest(word, candidates) }

// suggest returns the candidate closest to word within a few typos, or "".
func suggest(word string, candidates []string) string {
	word = strings.ToLower(word)
	best, bestD := "", -1
	for _, c := range candidates {
		d := fuzzy.Distance(word, strings.ToLower(c))
		if d > maxTypos(len(word)) {
			continue
		}
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best
}

func maxTypos(n int) int {
	switch {
	case n <= 3:
		return 1
	case n <= 7:
		return 2
	default:
		return 3
	}
}
