package configs

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite golden files (docs/massgen-compatibility.md, testdata/*.golden)")

// Every key the Go schema decodes has a table entry: a field added to schema.go without a row in
// the table fails here.
func TestKeyTableCoversSchema(t *testing.T) {
	var walk func(rt reflect.Type, path string)
	walk = func(rt reflect.Type, path string) {
		for rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
		}
		switch rt.Kind() {
		case reflect.Slice:
			walk(rt.Elem(), path+"[]")
			return
		case reflect.Struct:
		default:
			return
		}
		fields, _ := yamlFields(rt)
		for name, ft := range fields {
			p := joinPath(path, name)
			if len(keyIndex[p]) == 0 {
				t.Errorf("schema key %s has no entry in the key table", p)
				continue
			}
			if implementedSection(p) {
				walk(ft, p)
			}
		}
	}
	walk(typeOfConfig, "")
}

// implementedSection: some entry of path is implemented and not open, so its keys are checked.
func implementedSection(path string) bool {
	for _, i := range keyIndex[path] {
		if k := keyTable[i]; k.Status == Implemented && !k.Open {
			return true
		}
	}
	return false
}

func TestKeyTableIsConsistent(t *testing.T) {
	families := map[string]bool{}
	for _, bt := range backendTypeTable {
		families[bt.Family] = true
		if bt.Note == "" {
			t.Errorf("backend type %s has no note", bt.Name)
		}
	}
	seen := map[string]bool{}
	for _, k := range keyTable {
		id := k.Path + " on " + strings.Join(k.On, ",")
		if seen[id] {
			t.Errorf("%s: listed twice", id)
		}
		seen[id] = true
		if k.Note == "" {
			t.Errorf("%s: no note (an ignored key must say what happens instead)", id)
		}
		if k.Status != Implemented && k.Status != Ignored && k.Status != Refused {
			t.Errorf("%s: status %q", id, k.Status)
		}
		if len(k.Same) > 0 && k.Status != Ignored {
			t.Errorf("%s: Same values only make sense on ignored keys", id)
		}
		for _, o := range k.On {
			if _, ok := LookupBackendType(o); !ok && !families[o] {
				t.Errorf("%s: On names %q, neither a backend type nor a family", id, o)
			}
		}
		if !strings.HasPrefix(k.Path, "agents[].backend.") && len(k.On) > 0 {
			t.Errorf("%s: On is only for backend keys", id)
		}
		// Every entry is reachable: its parent is an implemented, walked key.
		if parent, last := splitKeyPath(k.Path); parent != "" {
			if !implementedSection(strings.TrimSuffix(parent, "[]")) {
				t.Errorf("%s: parent %s is not an implemented section, so the key is never checked", id, parent)
			}
			if last == "*" && len(k.On) == 0 {
				t.Errorf("%s: a wildcard must name its backends", id)
			}
		}
	}
}

func TestLookupKeyPrefersTheMostSpecificEntry(t *testing.T) {
	tests := []struct {
		path, typ string
		want      Status
		note      string
	}{
		{"agents[0].backend.enable_web_search", "openai", Implemented, "web_search"},
		{"agents[0].backend.enable_web_search", "gemini", Implemented, "Google Search"},
		{"agents[3].backend.enable_web_search", "grok", Implemented, "search_parameters"},
		{"agents[0].backend.enable_web_search", "groq", Ignored, "this backend has no web search"},
		{"agents[0].backend.temperature", "vllm", Implemented, "temperature"},
		{"agents[0].backend.temperature", "scripted", Ignored, "not a parameter"},
		{"agents[0].backend.whatever", "scripted", Ignored, "calls no model"},
		{"agents[0].backend.reasoning.summary", "chatcompletion", Ignored, "no reasoning summary"},
		{"agents[0].backend.mcp_servers[2].security.resolve_dns", "openai", Ignored, "not resolved"},
		{"orchestrator.coordination.use_skills", "", Ignored, "skills are not offered"},
	}
	for _, tt := range tests {
		k, ok := LookupKey(tt.path, tt.typ)
		if !ok || k.Status != tt.want || !strings.Contains(k.Note, tt.note) {
			t.Errorf("LookupKey(%s, %s) = %+v, %v; want %s with %q", tt.path, tt.typ, k, ok, tt.want, tt.note)
		}
	}
	if _, ok := LookupKey("agents[0].backend.whatever", "openai"); ok {
		t.Error("an unknown key on a model backend must stay unknown")
	}
}

// The keys of MassGen v0.1.12's validator (massgen/config_validator.py, backend/capabilities.py,
// mcp_tools/security.py) and YAML schema reference (docs/source/reference/yaml_schema.rst), with
// the status massgen gives them. A change of status must be made here on purpose.
var massgenSchemaKeys = []struct {
	path, backend string
	status        Status
}{
	{"agents", "", Implemented}, {"orchestrator", "", Implemented}, {"ui", "", Implemented},
	{"memory", "", Ignored}, {"timeout_settings.orchestrator_timeout_seconds", "", Implemented},
	{"models", "", Refused}, {"model_configs", "", Refused}, {"num_agents", "", Refused}, {"max_rounds", "", Refused},
	{"consensus_threshold", "", Refused}, {"voting_enabled", "", Refused}, {"enable_voting", "", Refused},
	{"agents[].id", "", Implemented}, {"agents[].backend", "", Implemented}, {"agents[].system_message", "", Implemented},
	{"agents[].memory", "", Ignored},
	{"agents[].backend.type", "openai", Implemented}, {"agents[].backend.model", "openai", Implemented},
	{"agents[].backend.api_key", "openai", Implemented}, {"agents[].backend.base_url", "chatcompletion", Implemented},
	{"agents[].backend.cwd", "claude", Implemented}, {"agents[].backend.mcp_servers", "gemini", Implemented},
	{"agents[].backend.temperature", "claude", Implemented}, {"agents[].backend.max_tokens", "gemini", Implemented},
	{"agents[].backend.exclude_tools", "openai", Implemented}, {"agents[].backend.allowed_tools", "claude_code", Ignored},
	{"agents[].backend.disallowed_tools", "claude_code", Ignored}, {"agents[].backend.permission_mode", "claude_code", Ignored},
	{"agents[].backend.max_thinking_tokens", "claude_code", Implemented}, {"agents[].backend.max_turns", "claude_code", Implemented},
	{"agents[].backend.max_thinking_tokens", "openai", Ignored}, {"agents[].backend.model", "claude_code", Implemented},
	{"agents[].backend.system_prompt", "claude_code", Refused}, {"agents[].backend.append_system_prompt", "claude", Refused},
	{"agents[].backend.agent_config", "", Refused}, {"agents[].backend.api_version", "azure_openai", Implemented},
	{"agents[].backend.enable_web_search", "openai", Implemented}, {"agents[].backend.enable_web_search", "claude", Implemented},
	{"agents[].backend.enable_web_search", "gemini", Implemented}, {"agents[].backend.enable_web_search", "grok", Implemented},
	{"agents[].backend.enable_code_execution", "claude", Implemented}, {"agents[].backend.enable_code_execution", "gemini", Implemented},
	{"agents[].backend.enable_code_interpreter", "openai", Implemented}, {"agents[].backend.betas", "claude", Implemented},
	{"agents[].backend.custom_tools", "openai", Implemented}, {"agents[].backend.upload_files", "openai", Ignored},
	{"agents[].backend.custom_tools[].path", "claude_code", Implemented}, {"agents[].backend.custom_tools[].function", "gemini", Implemented},
	{"agents[].backend.custom_tools[].name", "openai", Implemented}, {"agents[].backend.custom_tools[].category", "openai", Implemented},
	{"agents[].backend.custom_tools[].description", "grok", Implemented}, {"agents[].backend.custom_tools[].preset_args", "claude", Implemented},
	{"agents[].backend.enable_image_generation", "openai", Ignored}, {"agents[].backend.enable_audio_generation", "openai", Ignored},
	{"agents[].backend.enable_video_generation", "openai", Ignored}, {"agents[].backend.enable_file_generation", "openai", Ignored},
	{"agents[].backend.enable_mcp_command_line", "openai", Ignored}, {"agents[].backend.command_line_execution_mode", "openai", Ignored},
	{"agents[].backend.command_line_allowed_commands", "openai", Implemented}, {"agents[].backend.command_line_blocked_commands", "openai", Implemented},
	{"agents[].backend.command_line_docker_image", "openai", Ignored}, {"agents[].backend.command_line_docker_memory_limit", "openai", Ignored},
	{"agents[].backend.command_line_docker_cpu_limit", "openai", Ignored}, {"agents[].backend.command_line_docker_network_mode", "openai", Ignored},
	{"agents[].backend.command_line_docker_enable_sudo", "openai", Ignored}, {"agents[].backend.command_line_docker_credentials", "openai", Ignored},
	{"agents[].backend.command_line_docker_packages", "openai", Ignored}, {"agents[].backend.enable_rate_limit", "openai", Ignored},
	{"agents[].backend.context_paths", "openai", Ignored}, {"agents[].backend.use_multi_mcp", "gemini", Ignored},
	{"agents[].backend.mcp_sdk_auto", "gemini", Ignored}, {"agents[].backend.media_max_file_size_mb", "openai", Ignored},
	{"agents[].backend.mcp_servers[].name", "openai", Implemented}, {"agents[].backend.mcp_servers[].type", "openai", Implemented},
	{"agents[].backend.mcp_servers[].command", "openai", Implemented}, {"agents[].backend.mcp_servers[].args", "openai", Implemented},
	{"agents[].backend.mcp_servers[].url", "openai", Implemented}, {"agents[].backend.mcp_servers[].env", "openai", Implemented},
	{"agents[].backend.mcp_servers[].allowed_tools", "openai", Implemented}, {"agents[].backend.mcp_servers[].exclude_tools", "openai", Implemented},
	{"agents[].backend.mcp_servers[].security", "openai", Implemented}, {"agents[].backend.mcp_servers[].security.resolve_dns", "openai", Ignored}, {"agents[].backend.mcp_servers[].headers", "openai", Ignored},
	{"agents[].backend.mcp_servers[].timeout", "openai", Ignored}, {"agents[].backend.mcp_servers[].http_read_timeout", "openai", Ignored},
	{"agents[].backend.mcp_servers[].cwd", "openai", Ignored},
	{"orchestrator.snapshot_storage", "", Implemented}, {"orchestrator.agent_temporary_workspace", "", Implemented},
	{"orchestrator.session_storage", "", Implemented}, {"orchestrator.context_paths[].path", "", Implemented},
	{"orchestrator.context_paths[].permission", "", Implemented}, {"orchestrator.max_new_answers_per_agent", "", Implemented},
	{"orchestrator.coordination.enable_planning_mode", "", Implemented}, {"orchestrator.coordination.planning_mode_instruction", "", Implemented},
	{"orchestrator.coordination.max_orchestration_restarts", "", Implemented}, {"orchestrator.coordination.enable_agent_task_planning", "", Ignored},
	{"orchestrator.coordination.max_tasks_per_plan", "", Ignored}, {"orchestrator.coordination.task_planning_filesystem_mode", "", Ignored},
	{"orchestrator.coordination.enable_memory_filesystem_mode", "", Ignored}, {"orchestrator.coordination.use_skills", "", Ignored},
	{"orchestrator.coordination.massgen_skills", "", Ignored}, {"orchestrator.coordination.skills_directory", "", Ignored},
	{"orchestrator.skip_coordination_rounds", "", Implemented}, {"orchestrator.debug_final_answer", "", Implemented},
	{"orchestrator.timeout", "", Ignored}, {"orchestrator.voting_sensitivity", "", Implemented},
	{"orchestrator.answer_novelty_requirement", "", Implemented}, {"orchestrator.dspy", "", Ignored},
	{"ui.display_type", "", Implemented}, {"ui.logging_enabled", "", Ignored},
}

func TestMassGenSchemaKeysHaveTheirStatus(t *testing.T) {
	for _, k := range massgenSchemaKeys {
		got, ok := LookupKey(k.path, k.backend)
		if !ok || got.Status != k.status {
			t.Errorf("%s (%s): status %q (known %v), want %q", k.path, k.backend, got.Status, ok, k.status)
		}
	}
	for typ, want := range map[string]Status{"claude_code": Implemented, "ag2": Refused, "autogen": Refused} {
		if bt, _ := LookupBackendType(typ); bt.Status != want {
			t.Errorf("backend type %s: %q, want %q", typ, bt.Status, want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	_, warnings := mustLoad(t, t.TempDir(), `agents:
  - id: a
    temperature: 0.2
    backend:
      type: openai
      model: gpt-5
      temprature: 0.2
      enable_web_serch: true
orchestratr: {}
`, nil)
	got := map[string]string{}
	for _, w := range warnings {
		got[w.Key] = w.Suggestion
	}
	want := map[string]string{
		"agents[0].temperature":              "backend.temperature",
		"agents[0].backend.temprature":       "temperature",
		"agents[0].backend.enable_web_serch": "enable_web_search",
		"orchestratr":                        "orchestrator",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("suggestions = %v, want %v (warnings %v)", got, want, warnings)
	}
}

func TestSuggestFar(t *testing.T) {
	if s := suggest("xyz", []string{"model", "type"}); s != "" {
		t.Errorf("suggest far away = %q", s)
	}
}

func TestCompatibilityDoc(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCompatibilityDoc(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("..", "docs", "massgen-compatibility.md"), buf.Bytes())
	for _, k := range keyTable {
		if !strings.Contains(buf.String(), "`"+k.Path+"`") {
			t.Errorf("the page lacks %s", k.Path)
		}
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./configs -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with the key table: run go test ./configs -update and review the diff", path)
	}
}

// sharedConfigsDir finds MassGen's configs shared with the project (shared/massgen-configs
// above the checkout), or $MASSGEN_SHARED_CONFIGS.
func sharedConfigsDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("MASSGEN_SHARED_CONFIGS"); d != "" {
		return d
	}
	dir, _ := filepath.Abs(".")
	for ; ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(filepath.Join(dir, "shared", "massgen-configs")); err == nil && fi.IsDir() {
			return filepath.Join(dir, "shared", "massgen-configs")
		}
		if filepath.Dir(dir) == dir {
			t.Skip("shared/massgen-configs not found above the checkout (set MASSGEN_SHARED_CONFIGS)")
		}
	}
}

// Every key used by MassGen's own configs is in the key table, and loading reports every one
// that is not implemented. The golden file is the list of those keys with their status: a
// status that changes shows up in its diff.
func TestMassGenConfigsKeys(t *testing.T) {
	root := sharedConfigsDir(t)
	var files []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	for _, name := range Examples() {
		files = append(files, "@examples/"+name)
	}
	if len(files) == 0 {
		t.Fatalf("no YAML under %s", root)
	}
	statuses := map[string]string{}
	for _, f := range files {
		var data []byte
		var err error
		if rest, ok := strings.CutPrefix(f, "@examples/"); ok {
			data, err = Example(rest)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, warnings, lerr := LoadBytes(f, data, LoadOptions{BaseDir: t.TempDir(), Home: t.TempDir()})
		reported := map[string]bool{}
		for _, w := range warnings {
			if strings.HasPrefix(w.Message, "unknown key") {
				t.Errorf("%s:%d: %s: add it to the key table", f, w.Line, w.Message)
			}
			reported[w.Key] = true
		}
		if lerr != nil {
			var ve *ValidationError
			if !IsValidationError(lerr) {
				t.Fatalf("%s: %v", f, lerr)
			}
			ve = lerr.(*ValidationError)
			for _, p := range ve.Problems {
				reported[p.Key] = true
			}
		}
		for _, k := range fileKeys(t, f, data) {
			entry, ok := LookupKey(k.path, k.btype)
			if !ok {
				continue // reported above
			}
			label := canonicalPath(k.path)
			if len(entry.On) > 0 {
				label += " (" + k.btype + ")"
			}
			statuses[label] = string(entry.Status)
			if entry.Status != Implemented && !sameValue(entry, k.value) && !reported[k.path] {
				t.Errorf("%s: %s is %s but was not reported", f, k.path, entry.Status)
			}
		}
	}
	lines := make([]string, 0, len(statuses))
	for k, s := range statuses {
		lines = append(lines, fmt.Sprintf("%-70s %s", k, s))
	}
	sort.Strings(lines)
	golden(t, filepath.Join("testdata", "massgen_configs_keys.golden"), []byte(strings.Join(lines, "\n")+"\n"))
}

type fileKey struct {
	path, btype string
	value       *yaml.Node
}

// fileKeys lists the keys of a config the way a reader sees them, independently of checkKeys:
// every key down to the first one that is not an implemented section.
func fileKeys(t *testing.T, name string, data []byte) []fileKey {
	d, err := parseDocument(name, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	d.normalize()
	var out []fileKey
	var walk func(n *yaml.Node, path, btype string)
	walk = func(n *yaml.Node, path, btype string) {
		n = deref(n)
		switch {
		case n == nil:
		case n.Kind == yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i), btype)
			}
		case n.Kind == yaml.MappingNode:
			if canonicalPath(path) == "agents[].backend" {
				if _, v := mapGet(n, "type"); v != nil {
					btype = v.Value
				}
				if backendFamily(btype) == "" {
					return
				}
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := joinPath(path, n.Content[i].Value)
				out = append(out, fileKey{p, btype, n.Content[i+1]})
				if k, ok := LookupKey(p, btype); ok && k.Status == Implemented && !k.Open {
					walk(n.Content[i+1], p, btype)
				}
			}
		}
	}
	walk(d.root, "", "")
	if len(out) == 0 {
		t.Fatalf("%s: no keys", name)
	}
	return slices.Clip(out)
}

// BenchmarkLoadWithKeyChecks loads MassGen's fifty-agent example: parsing, the key table walk,
// validation and relocation together.
func BenchmarkLoadWithKeyChecks(b *testing.B) {
	data, err := Example("basic/multi/fifty_gemini_agents")
	if err != nil {
		b.Skip(err)
	}
	base := b.TempDir()
	for b.Loop() {
		if _, _, err := LoadBytes("fifty.yaml", data, LoadOptions{BaseDir: base, Home: base}); err != nil {
			b.Fatal(err)
		}
	}
}
