package vocab

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestDecoding: every vocabulary takes its words and "" (unset), in YAML's and JSON's way
// (encoding.TextUnmarshaler), and refuses anything else saying the words it knows, without
// touching the value it had.
func TestDecoding(t *testing.T) {
	for _, v := range All() {
		t.Run(v.Type.Name(), func(t *testing.T) {
			if len(v.Values) == 0 || v.Noun == "" {
				t.Fatalf("%s: no words or no noun: %+v", v.Type, v)
			}
			fresh := func() encoding.TextUnmarshaler {
				return reflect.New(v.Type).Interface().(encoding.TextUnmarshaler)
			}
			for _, w := range append([]string{""}, v.Values...) {
				u := fresh()
				if err := u.UnmarshalText([]byte(w)); err != nil {
					t.Errorf("%q refused: %v", w, err)
				}
				if got := reflect.ValueOf(u).Elem().String(); got != w {
					t.Errorf("%q decoded as %q", w, got)
				}
			}
			for _, bad := range []string{"bogus", strings.ToUpper(v.Values[0]), " " + v.Values[0]} {
				u := fresh()
				if err := u.UnmarshalText([]byte(v.Values[0])); err != nil {
					t.Fatal(err)
				}
				err := u.UnmarshalText([]byte(bad))
				want := `unknown ` + v.Noun + ` "` + bad + `" (known: ` + strings.Join(v.Values, ", ") + `)`
				if err == nil || err.Error() != want {
					t.Errorf("%q: error %v, want %s", bad, err, want)
				}
				if got := reflect.ValueOf(u).Elem().String(); got != v.Values[0] {
					t.Errorf("%q refused, but the value became %q", bad, got)
				}
			}
			// JSON (a session's saved config) decodes through the same method.
			st := reflect.StructOf([]reflect.StructField{{Name: "W", Type: v.Type, Tag: `json:"w"`}})
			if err := json.Unmarshal([]byte(`{"w":"bogus"}`), reflect.New(st).Interface()); err == nil || !strings.Contains(err.Error(), "(known: ") {
				t.Errorf("JSON accepted bogus: %v", err)
			}
			if err := json.Unmarshal([]byte(`{"w":"`+v.Values[len(v.Values)-1]+`"}`), reflect.New(st).Interface()); err != nil {
				t.Errorf("JSON refused %q: %v", v.Values[len(v.Values)-1], err)
			}
		})
	}
}

// TestVotingSensitivityExtendsStrictness: voting_sensitivity's levels are answer_novelty's, in
// their order, and checklist_gated.
func TestVotingSensitivityExtendsStrictness(t *testing.T) {
	got := Words[VotingSensitivity]()
	want := append(Words[Strictness](), string(ChecklistGated))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("VotingSensitivity = %v, want %v", got, want)
	}
	for _, l := range []VotingSensitivity{VotingLenient, VotingBalanced, VotingStrict} {
		if _, err := parse[Strictness](string(l)); err != nil {
			t.Errorf("%s is not a Strictness: %v", l, err)
		}
	}
}

// TestChecks: the checks callers outside configs use at their own boundary (a Spec or a mode
// built in code) are the vocabulary's.
func TestChecks(t *testing.T) {
	if err := SandboxSeatbelt.Check(); err == nil {
		t.Error("seatbelt, what auto is on macOS, accepted as a word of command_sandbox")
	}
	for _, m := range append(SandboxMode("").Values(), "") {
		if err := m.Check(); err != nil {
			t.Errorf("sandbox %q: %v", m, err)
		}
	}
	if err := PermissionMode("Default").Check(); err == nil || !strings.Contains(err.Error(), "acceptEdits, default, bypassPermissions") {
		t.Errorf("permission mode Default: %v", err)
	}
	if a, err := ParseAccess("write"); a != AccessWrite || err != nil {
		t.Errorf("ParseAccess(write) = %q, %v", a, err)
	}
}

// TestParseDisplay: --display and ui.display_type take the words, MassGen's names and a few
// more, in any case; anything else is refused naming the words.
func TestParseDisplay(t *testing.T) {
	tests := []struct {
		in   string
		want Display
	}{
		{"", DisplayAuto}, {"auto", DisplayAuto}, {"live", DisplayLive}, {"plain", DisplayPlain}, {"silent", DisplaySilent},
		{"rich_terminal", DisplayLive}, {"textual_terminal", DisplayLive}, {" Simple ", DisplayPlain}, {"QUIET", DisplaySilent},
	}
	for _, tt := range tests {
		if got, err := ParseDisplay(tt.in); got != tt.want || err != nil {
			t.Errorf("ParseDisplay(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := ParseDisplay("detailed"); err == nil || err.Error() != `unknown display "detailed" (known: auto, live, plain, silent)` {
		t.Errorf("ParseDisplay(detailed): %v", err)
	}
	for d, aliases := range DisplayAliases() {
		for _, a := range aliases {
			if got, _ := ParseDisplay(a); got != d {
				t.Errorf("alias %s = %q, listed under %q", a, got, d)
			}
		}
	}
}
