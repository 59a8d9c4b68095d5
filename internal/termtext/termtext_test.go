package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	tests := []struct {
		name, in, line, text string
	}{
		{"plain", "hello wörld ✓ 日本", "hello wörld ✓ 日本", "hello wörld ✓ 日本"},
		{"OSC title", "a\x1b]0;pwned\x07b", `a\x1b]0;pwned\x07b`, `a\x1b]0;pwned\x07b`},
		{"CSI clear", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"C1 CSI as UTF-8", "x\u009b31my", `x\u009b31my`, `x\u009b31my`},
		{"raw 0x9b byte", "x\x9b31my", `x\x9b31my`, `x\x9b31my`},
		{"DEL and NUL", "a\x7fb\x00c", `a\x7fb\x00c`, `a\x7fb\x00c`},
		{"tab and newlines", "a\tb\nc\r\nd\re", `a\tb\nc\r\nd\re`, "a\tb\nc\nd\\re"},
		{"bidi override", "evil\u202etxt.exe", `evil\u202etxt.exe`, `evil\u202etxt.exe`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`, `\u2066x\u2069`},
		{"zero width space and BOM", "a\u200bb\ufeff", `a\u200bb\ufeff`, `a\u200bb\ufeff`},
		{"line separator", "a\u2028b", `a\u2028b`, `a\u2028b`},
		{"tag characters", "hi\U000E0041\U000E007F", `hi\U000e0041\U000e007f`, `hi\U000e0041\U000e007f`},
		{"ZWJ emoji stays", "👩\u200d💻", "👩\u200d💻", "👩\u200d💻"},
		{"replacement char stays", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
		{"backslash stays", `C:\Users\x1b`, `C:\Users\x1b`, `C:\Users\x1b`},
		{"NEL (C1 newline)", "a\u0085b", `a\u0085b`, `a\u0085b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
			}
		})
	}
}

func TestSqueeze(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"  a\n\tb  c ", 0, "a b c"},
		{"abcdef", 4, "abc…"},
		{"abc", 3, "abc"},
		{"\x1b[2Jabc", 0, `\x1b[2Jabc`},
		// The cut never splits an escape: \x1b is one unit of 4 characters.
		{"ab\x1bcdef", 5, "ab…"},
		{"ab\x1bcdef", 7, `ab\x1b…`},
		{"日本語テキスト", 4, "日本語…"},
	}
	for _, tt := range tests {
		if got := Squeeze(tt.in, tt.n); got != tt.want {
			t.Errorf("Squeeze(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestJSONKeepsTheValue(t *testing.T) {
	name := "a\x1b]0;pwned\x07b\u009b\u202e\U000E0041.txt"
	enc, err := json.Marshal(map[string]string{"path": name, "n": "line\nnext"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(enc, []byte("\u009b")) {
		t.Fatalf("test premise: encoding/json writes U+009B raw: %q", enc)
	}
	out := JSON(enc)
	assertClean(t, out)
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("JSON(%q) = %q: not JSON: %v", enc, out, err)
	}
	if back["path"] != name || back["n"] != "line\nnext" {
		t.Errorf("decoded %q, want %q", back, name)
	}
	if got := JSON([]byte(`{"a":1}` + "\n")); string(got) != `{"a":1}`+"\n" {
		t.Errorf("clean JSON changed: %q", got)
	}
}

// TestJSONWriterSplitCharacters: a character cut between two writes is held, not mangled.
func TestJSONWriterSplitCharacters(t *testing.T) {
	enc, _ := json.Marshal([]string{"x\u009by", "日本", "\U000E0041"})
	enc = append(enc, '\n')
	for cut := 0; cut <= len(enc); cut++ {
		var buf bytes.Buffer
		w := JSONWriter(&buf)
		if n, err := w.Write(enc[:cut]); err != nil || n != cut {
			t.Fatalf("write: %d %v", n, err)
		}
		if _, err := w.Write(enc[cut:]); err != nil {
			t.Fatal(err)
		}
		if want := JSON(enc); !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("cut at %d: %q, want %q", cut, buf.Bytes(), want)
		}
	}
}

// assertClean fails if b holds anything that could drive a terminal: a C0 control other than
// LF and tab, DEL, a C1 control (raw byte or UTF-8), a format character, or a non-UTF-8 byte.
func assertClean(t *testing.T, b []byte) {
	t.Helper()
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size == 1) || (Hidden(r) && r != '\n' && r != '\t') {
			t.Fatalf("raw %U at byte %d of %q", r, i, b)
		}
		i += size
	}
}

// FuzzClean: whatever the input, no output holds a hidden character (Line: not even a line
// break), cleaning is idempotent, and JSON keeps the decoded value of any JSON string.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x1b]0;t\x07", "\x9b\xff\xfe", "\u202e\u2066", "a\r\nb\rc", "\U000E0001", "👩\u200d💻"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, text, sq := Line(s), Text(s), Squeeze(s, 20)
		for _, out := range []string{line, sq} {
			assertClean(t, []byte(out))
			if strings.ContainsAny(out, "\n\t") {
				t.Fatalf("one-line output %q of %q holds a line break or tab", out, s)
			}
		}
		assertClean(t, []byte(text))
		if Line(line) != line || Text(text) != text {
			t.Fatalf("not idempotent on %q", s)
		}
		if utf8.RuneCountInString(sq) > 20 {
			t.Fatalf("Squeeze(%q, 20) = %q: longer than 20", s, sq)
		}
		enc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(enc)
		assertClean(t, out)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("JSON(%q) = %q: %v", enc, out, err)
		}
		var want string
		_ = json.Unmarshal(enc, &want)
		if back != want {
			t.Fatalf("JSON changed the value: %q, want %q", back, want)
		}
	})
}

// BenchmarkLine: the cost on a clean path (the common case) and on a hostile one.
func BenchmarkLine(b *testing.B) {
	for _, bc := range []struct{ name, s string }{
		{"clean", strings.Repeat("/home/me/project/src/file.go ", 4)},
		{"hostile", strings.Repeat("a\x1b]0;pwned\x07\u202e", 8)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			for b.Loop() {
				_ = Line(bc.s)
			}
		})
	}
}
