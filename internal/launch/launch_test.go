package launch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScriptIndex(t *testing.T) {
	tests := []struct {
		program string
		args    string
		want    int
	}{
		{"python3", "server.py --port 1", 0},
		{"python3.12", "-u -W ignore server.py", 3},
		{"python3", "-m pkg.server", -1},
		{"python3", "-c print(1)", -1},
		{"python3", "-uc print(1)", -1},
		{"python3", "-", -1},
		{"python3", "-- -weird.py", 1},
		{"/usr/bin/python3", "x.py", 0},
		{"bash", "-e ./x.sh a", 1},
		{"bash", "-ec 'echo'", -1},
		{"bash", "-o pipefail x.sh", 2},
		{"sh", "", -1},
		{"node", "--require ./hook.js server.js", 2},
		{"node", "-e 1", -1},
		{"node", "--input-type=module main.mjs", 1},
		{"deno", "run --allow-read main.ts", 2},
		{"ruby", "-I lib x.rb", 2},
		{"npx", "-y pkg", -1}, // not an interpreter: no script
		{`C:\Python\python.exe`, "x.py", 0},
	}
	for _, tt := range tests {
		args := strings.Fields(tt.args)
		got, ok := ScriptIndex(InterpreterName(tt.program), args, nil)
		if !ok || got != tt.want {
			t.Errorf("ScriptIndex(%s %s) = %d, %v; want %d", tt.program, tt.args, got, ok, tt.want)
		}
	}
	if _, ok := ScriptIndex("python3", []string{"$OPT", "x.py"}, func(i int) bool { return i != 0 }); ok {
		t.Error("an option only known at run time must make the script unknown")
	}
}

func TestShebang(t *testing.T) {
	for in, want := range map[string][2]string{
		"#!/bin/sh\necho":                 {"/bin/sh", ""},
		"#! /usr/bin/env node\n":          {"/usr/bin/env", "node"},
		"#!/usr/bin/env -S deno run -A\n": {"/usr/bin/env", "deno"},
		"echo hi":                         {"", ""},
		"\x7fELF":                         {"", ""},
	} {
		a, b := Shebang([]byte(in))
		if a != want[0] || b != want[1] {
			t.Errorf("Shebang(%q) = %q, %q; want %q", in, a, b, want)
		}
	}
}

// An Image holds exactly the bytes that were hashed, whatever happens to the file afterwards;
// a file whose content is not the expected one gives no Image.
func TestImages(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "tool.sh")
	if err := os.WriteFile(f, []byte("#!/bin/sh\necho v1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := Sum(f)
	if err != nil {
		t.Fatal(err)
	}
	area, err := NewArea(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(area.Dir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("area %v %v", fi, err)
	}
	imgs := NewImages(area)
	img, err := imgs.Get(f, sum)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(img.Path()) != "tool.sh" || !strings.HasPrefix(img.Path(), area.Dir()) {
		t.Errorf("copy at %s", img.Path())
	}
	if again, err := imgs.Get(f, sum); err != nil || again != img {
		t.Errorf("an unchanged file is read again: %v %v", again, err)
	}
	if err := os.WriteFile(f, []byte("#!/bin/sh\necho v2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var se *StaleError
	if _, err := imgs.Get(f, sum); !errors.As(err, &se) || se.Path != f {
		t.Fatalf("changed file: %v", err)
	}
	if b, _ := os.ReadFile(img.Path()); string(b) != "#!/bin/sh\necho v1\n" {
		t.Errorf("the copy changed: %q", b)
	}
	if fi, err := os.Stat(img.Path()); err != nil || fi.Mode().Perm() != 0o500 {
		t.Errorf("copy mode %v %v", fi, err)
	}
	imgs.Close()
	if err := area.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(area.Dir()); !os.IsNotExist(err) {
		t.Errorf("area left behind: %v", err)
	}
}
