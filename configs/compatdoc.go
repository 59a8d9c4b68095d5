package configs

import (
	"fmt"
	"io"
	"strings"
)

// WriteCompatibilityDoc writes docs/massgen-compatibility.md: the backend types and the key
// table as Markdown. TestCompatibilityDoc keeps the file in the repository equal to it.
func WriteCompatibilityDoc(w io.Writer) error {
	var b strings.Builder
	b.WriteString(compatIntro)
	b.WriteString("\n## Backend types\n\n")
	b.WriteString("| `type:` | status | `model:` | notes |\n| --- | --- | --- | --- |\n")
	for _, bt := range backendTypeTable {
		model := "optional"
		if bt.ModelRequired {
			model = "required"
		}
		if bt.Status == Refused {
			model = "-"
		}
		fmt.Fprintf(&b, "| `%s`%s | %s | %s | %s |\n", bt.Name, massgenMark(bt.Massgen), bt.Status, model, mdCell(bt.Reason()))
	}
	for _, sec := range compatSections {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", sec.title, sec.intro)
		b.WriteString("| key | backends | status | what massgen does |\n| --- | --- | --- | --- |\n")
		for _, k := range keyTable {
			if keySection(k.Path) != sec.title {
				continue
			}
			note := k.Note
			if k.Since != "" {
				note = "(MassGen " + k.Since + ") " + note
			}
			if len(k.Same) > 0 {
				note += fmt.Sprintf(" (no warning for %s: that is what massgen does)", strings.Join(quoteAll(k.Same), ", "))
			}
			on := backendsLabel(k.On)
			if len(k.On) == 0 && len(keyIndex[k.Path]) > 1 {
				on = "the others"
			}
			fmt.Fprintf(&b, "| `%s`%s | %s | %s | %s |\n", k.Path, massgenMark(k.Massgen), on, k.Status, mdCell(note))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

const compatIntro = `# MassGen compatibility

<!-- Generated from configs/keytable.go by ` + "`go test ./configs -run TestCompatibilityDoc -update`" + `. Do not edit by hand. -->

massgen reads the YAML configs of MassGen (the Python project): every key of its v0.1.12 schema,
and the keys MassGen added up to v0.1.97 (every key its v0.1.91 configs use, every key of its
orchestrator, coordination and timeout sections, its user-facing backend options, v0.1.96's srt
keys and v0.1.97's permission block), each of those marked with the release that introduced it
("(MassGen 0.1.38)", from MassGen's history). This page lists them, and massgen's own keys
(marked *massgen*), with what massgen does with each. The same table drives ` + "`massgen configs validate`" + `, the start of a run and
` + "`massgen configs show --resolved`" + `, so they cannot disagree with this page.

- **implemented**: the key does what the last column says.
- **ignored**: the key is accepted and not acted on. ` + "`configs validate`" + ` and the start of a
  run print a warning naming the key and saying what happens instead (` + "`configs validate --strict`" + `
  makes it an error), and ` + "`configs show --resolved`" + ` prints ` + "`# ignored: ...`" + ` on its line.
- **refused**: ` + "`configs validate`" + ` and a run stop with an error (exit 2) saying why.

A key that is in none of these tables is reported as unknown, with the key it most likely meant
(` + "`modle`" + ` -> ` + "`model`" + `, ` + "`temprature`" + ` -> ` + "`temperature`" + `). Where a key means different things on
different backends, it has a row per backend; "Chat Completions" stands for ` + "`chatcompletion`" + `
and every type built on it (` + "`grok`" + `, ` + "`azure_openai`" + `, ` + "`lmstudio`" + `, ` + "`vllm`" + `, ...). ` + "`[]`" + ` in a
key stands for any list item, ` + "`*`" + ` for any key not listed. Before a run, ` + "`configs validate`" + ` also checks what depends on this
machine: the API key of every agent (by variable name), MCP server commands on ` + "`PATH`" + `, and the
options each backend refuses.
`

var compatSections = []struct{ title, intro string }{
	{"Top level", "Sections and keys at the top of the file."},
	{"Agents", "Keys of each entry of `agents:` (or of the single `agent:`)."},
	{"Backend", "Keys of `agents[].backend`. Provider request parameters are sent on the backends whose API takes them and ignored elsewhere."},
	{"MCP servers", "Keys of each entry of `agents[].backend.mcp_servers` (a list, or a `name: {...}` mapping). See [mcp.md](mcp.md)."},
	{"Scripted backend steps", "Keys of each step of `agents[].backend.script` (massgen's deterministic demo and test backend)."},
	{"Orchestrator", "Keys of `orchestrator:`."},
}

func keySection(path string) string {
	switch {
	case strings.HasPrefix(path, "orchestrator"):
		return "Orchestrator"
	case strings.HasPrefix(path, "agents[].backend.mcp_servers[]"):
		return "MCP servers"
	case strings.HasPrefix(path, "agents[].backend.script[]"):
		return "Scripted backend steps"
	case strings.HasPrefix(path, "agents[].backend."):
		return "Backend"
	case strings.HasPrefix(path, "agents[]"):
		return "Agents"
	}
	return "Top level"
}

func backendsLabel(on []string) string {
	if len(on) == 0 {
		return "all"
	}
	names := make([]string, len(on))
	for i, o := range on {
		if o == famChat {
			names[i] = "Chat Completions"
		} else {
			names[i] = "`" + o + "`"
		}
	}
	return strings.Join(names, ", ")
}

func massgenMark(own bool) string {
	if own {
		return " *massgen*"
	}
	return ""
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}

// mdCell keeps a note inside one table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
