package winpath

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical spelling; "" when refused
		err  string // part of the refusal
	}{
		// drive letters
		{`C:\`, `C:\`, ""},
		{`C:\Users\me`, `C:\Users\me`, ""},
		{`c:/users/me`, `C:\users\me`, ""},
		{`C:/a\b/c`, `C:\a\b\c`, ""},
		{`C:\a\\b\\\c\`, `C:\a\b\c`, ""},
		{`C:\a\.\b\.`, `C:\a\b`, ""},
		{`C:\a\b\..\c`, `C:\a\c`, ""},
		{`C:\a\..\..\b`, "", "climbs above the root"},
		{`C:\..`, "", "climbs above the root"},
		{`z:\x`, `Z:\x`, ""},
		{`C:\Program Files (x86)\App`, `C:\Program Files (x86)\App`, ""},
		{`C:\日本\файл.txt`, `C:\日本\файл.txt`, ""},
		{`C:\a b\ c`, `C:\a b\ c`, ""},
		{`C:\.git\config`, `C:\.git\config`, ""},
		// UNC
		{`\\server\share`, `\\server\share\`, ""},
		{`\\server\share\dir\f.txt`, `\\server\share\dir\f.txt`, ""},
		{`//server/share/dir`, `\\server\share\dir`, ""},
		{`\\server\share\a\..\b`, `\\server\share\b`, ""},
		{`\\server\share\..\other`, "", "climbs above the root"},
		{`\\server`, "", "needs a server and a share"},
		{`\\server\`, "", "needs a server and a share"},
		{`\\\share`, "", "needs a server and a share"},
		{`\\server\sh:are\x`, "", "alternate data stream"},
		// verbatim
		{`\\?\C:\a\b`, `C:\a\b`, ""},
		{`\\?\c:\`, `C:\`, ""},
		{`\\?\UNC\server\share\x`, `\\server\share\x`, ""},
		{`\\?\unc\server\share`, `\\server\share\`, ""},
		{`\\?\C:\a\..\b`, "", "taken as a name"},
		{`\\?\C:\a\.\b`, "", "taken as a name"},
		{`\\?\C:\a/b`, "", "does not allow"},
		{`\\?\C:\a\\b`, "", "empty name"},
		{`\\?\C:\secret.txt.`, "", "ends with a dot"},
		{`\\?\Volume{b75e2c83-0000-0000-0000-602f00000000}\x`, "", "only"},
		{`\\?\GLOBALROOT\Device\HarddiskVolume1\x`, "", "only"},
		// devices and relative forms
		{`\\.\C:\x`, "", "device paths"},
		{`\\.\pipe\x`, "", "device paths"},
		{`//./PhysicalDrive0`, "", "device paths"},
		{`\??\C:\x`, "", "device paths"},
		{`\\?`, "", "device paths"},
		{`C:`, "", "current directory of drive C:"},
		{`C:a\b`, "", "current directory of drive C:"},
		{`\a\b`, "", "current drive"},
		{`/a/b`, "", "current drive"},
		{`a\b`, "", "not absolute"},
		{`.`, "", "not absolute"},
		{``, "", "empty"},
		{"C:\\a\x00b", "", "NUL"},
		{`1:\x`, "", "not absolute"},
		// reserved device names, any case, extension, trailing spaces before the dot
		{`C:\CON`, "", "reserved device name CON"},
		{`C:\dir\con`, "", "reserved device name CON"},
		{`C:\dir\Nul.txt`, "", "reserved device name NUL"},
		{`C:\dir\nul.tar.gz`, "", "reserved device name NUL"},
		{`C:\dir\aux .log`, "", "reserved device name AUX"},
		{`C:\dir\PRN`, "", "reserved device name PRN"},
		{`C:\dir\com1`, "", "reserved device name COM1"},
		{`C:\dir\COM9.txt`, "", "reserved device name COM9"},
		{`C:\dir\lpt5`, "", "reserved device name LPT5"},
		{`C:\dir\COM0`, "", "reserved device name COM0"},
		{`C:\dir\COM¹`, "", "reserved device name COM¹"},
		{`C:\dir\lpt³.x`, "", "reserved device name LPT³"},
		{`C:\dir\CONIN$`, "", "reserved device name CONIN$"},
		{`C:\dir\conout$.txt`, "", "reserved device name CONOUT$"},
		{`C:\dir\CON\x`, "", "reserved device name CON"},
		{`\\server\share\NUL`, "", "reserved device name NUL"},
		{`C:\dir\console`, `C:\dir\console`, ""},
		{`C:\dir\COM10`, `C:\dir\COM10`, ""},
		{`C:\dir\LPT`, `C:\dir\LPT`, ""},
		{`C:\dir\xNUL`, `C:\dir\xNUL`, ""},
		{`C:\dir\.CON`, `C:\dir\.CON`, ""},
		// alternate data streams
		{`C:\dir\file.txt:secret`, "", "alternate data stream"},
		{`C:\dir\file.txt::$DATA`, "", "alternate data stream"},
		{`C:\dir\file.txt:stream:$DATA`, "", "alternate data stream"},
		{`C:\dir:x\file`, "", "alternate data stream"},
		// trailing dots and spaces
		{`C:\dir\secret.txt.`, "", `it would open "secret.txt"`},
		{`C:\dir\secret.txt `, "", `it would open "secret.txt"`},
		{`C:\dir\secret.txt. . `, "", `it would open "secret.txt"`},
		{`C:\dir.\file`, "", "ends with a dot"},
		{`C:\dir\...`, "", "ends with a dot"},
		{`C:\dir\.git.`, "", `it would open ".git"`},
		// characters Windows does not allow
		{`C:\dir\a*b`, "", "does not allow"},
		{`C:\dir\a?b`, "", "does not allow"},
		{`C:\dir\a<b`, "", "does not allow"},
		{`C:\dir\a>b`, "", "does not allow"},
		{`C:\dir\a"b`, "", "does not allow"},
		{`C:\dir\a|b`, "", "does not allow"},
		{"C:\\dir\\a\tb", "", "control character"},
		{"C:\\dir\\a\nb", "", "control character"},
	}
	for _, tt := range tests {
		got, err := Clean(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Clean(%q) = %q, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			var pe *Error
			if err != nil && !errors.As(err, &pe) {
				t.Errorf("Clean(%q): error %T is not a *winpath.Error", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Clean(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			continue
		}
		if again, err := Clean(got); err != nil || again != got {
			t.Errorf("Clean(Clean(%q)) = %q, %v; want %q (canonical form is stable)", tt.in, again, err, got)
		}
	}
}

func mustParse(t *testing.T, s string) Path {
	t.Helper()
	p, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWithinAndEqual(t *testing.T) {
	tests := []struct {
		p, root string
		within  bool
		equal   bool
	}{
		{`C:\a\b`, `C:\a`, true, false},
		{`C:\A\B`, `c:\a`, true, false},
		{`c:/a/b`, `C:\A\`, true, false},
		{`C:\a`, `C:\a`, true, true},
		{`C:\a`, `c:\A`, true, true},
		{`C:\ab`, `C:\a`, false, false},
		{`C:\a`, `C:\a\b`, false, false},
		{`C:\x`, `C:\`, true, false},
		{`C:\`, `C:\`, true, true},
		{`D:\a`, `C:\a`, false, false},
		{`\\srv\share\a`, `\\SRV\Share`, true, false},
		{`\\srv\share2\a`, `\\srv\share`, false, false},
		{`\\?\UNC\srv\share\a`, `\\srv\share\a`, true, true},
		{`\\?\C:\Users\ME`, `C:\users\me`, true, true},
		{`C:\Straße`, `C:\STRASSE`, false, false}, // no multi-character folding on Windows
		{`C:\Ärger\x`, `C:\ärger`, true, false},
		{`C:\a\..\b`, `C:\a`, false, false},
	}
	for _, tt := range tests {
		p, root := mustParse(t, tt.p), mustParse(t, tt.root)
		if got := Within(p, root); got != tt.within {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.p, tt.root, got, tt.within)
		}
		if got := Equal(p, root); got != tt.equal {
			t.Errorf("Equal(%q, %q) = %v, want %v", tt.p, tt.root, got, tt.equal)
		}
	}
}

func TestShortNameLike(t *testing.T) {
	for name, want := range map[string]bool{
		"PROGRA~1": true, "MICROS~2.TXT": true, "a~10": true, "AB12~1": true,
		"Program Files": false, "~": false, "file~": false, "~x": false, "back~up": false, ".~lock": false,
	} {
		if got := ShortNameLike(name); got != want {
			t.Errorf("ShortNameLike(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestResolveShort(t *testing.T) {
	// A fake volume: what exists, by long name, and the short names Windows would accept.
	long := func(p string) (string, error) {
		known := map[string]string{
			`C:\PROGRA~1`:                   `C:\Program Files`,
			`C:\PROGRA~1\App`:               `C:\Program Files\App`,
			`C:\Users\me\DOCUME~1`:          `C:\Users\me\Documents`,
			`C:\Users\me\DOCUME~1\SECRET~1`: `C:\Users\me\Documents\secret notes.txt`,
			`C:\odd\X~1`:                    `C:\odd\bad.`,
			`C:\moved\X~1`:                  `C:\elsewhere\x`,
		}
		if l, ok := known[p]; ok {
			return l, nil
		}
		if p == `C:\denied\A~1` {
			return "", errors.New("access is denied")
		}
		return "", fs.ErrNotExist
	}
	tests := []struct{ in, want, err string }{
		{`C:\Users\me\file.txt`, `C:\Users\me\file.txt`, ""},
		{`C:\PROGRA~1`, `C:\Program Files`, ""},
		{`C:\PROGRA~1\App\new.txt`, `C:\Program Files\App\new.txt`, ""},
		{`C:\PROGRA~1\other\new.txt`, `C:\Program Files\other\new.txt`, ""},
		{`C:\Users\me\DOCUME~1\SECRET~1`, `C:\Users\me\Documents\secret notes.txt`, ""},
		{`C:\PROGRA~1\NEWDIR~1\x`, "", "does not exist yet"},
		{`C:\nothing\ABCDEF~1`, "", "cannot be resolved"},
		{`C:\denied\A~1`, "", "access is denied"},
		{`C:\odd\X~1`, "", "ends with a dot"},
		{`C:\moved\X~1`, "", "another path"},
	}
	for _, tt := range tests {
		got, err := resolveShort(mustParse(t, tt.in), long)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("resolveShort(%q) = %q, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("resolveShort(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	// Here (not Windows) nothing resolves: short-looking names are refused, others pass.
	if _, err := ResolveShort(mustParse(t, `C:\PROGRA~1\x`)); err == nil {
		t.Error(`ResolveShort(C:\PROGRA~1\x) passed where short names cannot be resolved`)
	}
	if p, err := ResolveShort(mustParse(t, `C:\Program Files\x`)); err != nil || p.String() != `C:\Program Files\x` {
		t.Errorf("ResolveShort of a long path = %q, %v", p, err)
	}
}

// FuzzParse: whatever is accepted has a stable canonical form whose every name passes
// CheckName, and names the same entry as the input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`C:\a\b`, `\\s\h\x`, `\\?\C:\x`, `\\?\UNC\s\h`, `C:\a\..\CON`, `C:\x.txt:$DATA`, `c:/a/./b/`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		for _, e := range p.Elems {
			if err := CheckName(e); err != nil {
				t.Fatalf("Parse(%q) kept the name %q: %v", s, e, err)
			}
		}
		q, err := Parse(p.String())
		if err != nil || q.String() != p.String() || !Equal(p, q) || !Within(p, q) {
			t.Fatalf("Parse(%q) = %q, which parses again as %q, %v", s, p, q, err)
		}
	})
}

func TestFoldAndResolveShortWith(t *testing.T) {
	for in, want := range map[string]string{"ſecrets.txt": "SECRETS.TXT", `c:\Ab\é`: `C:\AB\É`, "ß": "ß"} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
	long := func(p string) (string, error) {
		if strings.EqualFold(p, `C:\PROGRA~1`) {
			return `C:\Program Files`, nil
		}
		return "", fs.ErrNotExist
	}
	got, err := ResolveShortWith(mustParse(t, `C:\PROGRA~1\x`), long)
	if err != nil || got.String() != `C:\Program Files\x` {
		t.Errorf("ResolveShortWith = %q, %v", got, err)
	}
}
