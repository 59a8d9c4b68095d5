package shellcmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/permissions/toolargs"
)

// TestAnalyze: command lines as a whole (the shell's syntax around the programs of the table).
// want is as in the table's examples: sorted "path:access" items and "inline", "dynamic",
// "refused", "error".
func TestAnalyze(t *testing.T) {
	tests := []struct {
		name, command, workDir, want string
	}{
		{"plain read", "cat a.txt", "", "a.txt:r"},
		{"work dir joins relative words", "cat a.txt", "sub", "sub:r sub/a.txt:r"},
		{"redirect out", "echo hi > out.txt", "", "out.txt:w"},
		{"redirect append", "echo hi >> /etc/x", "", "/etc/x:w"},
		{"redirect in", "wc -l < in.txt", "", "in.txt:r"},
		{"clobber", "echo x >| f", "", "f:w"},
		{"fd redirect to a file", "exec 3>f", "", "f:w"},
		{"fd dup is not a file", "make 2>&1", "", ""},
		{"dev null is fine", "make 2>/dev/null", "", ""},
		{"reading a device", "head -c 8 /dev/urandom", "", ""},
		{"escapes are removed", `cat /et\c/passwd`, "", "/etc/passwd:r"},
		{"brace expansion", "cat {/etc/passwd,x}", "", "/etc/passwd:r x:r"},
		{"tilde", "cat ~/notes", "", "~/notes:r"},
		{"quoted tilde is a name", "cat '~/notes'", "", "./~/notes:r"},
		{"~user is refused", "cat ~root/x", "", "error"},
		{"option with attached path", "gcc -o/etc/x main.c", "", "/etc/x:w main.c:r"},
		{"option=path", "tool --config=/etc/shadow", "", "/etc/shadow:r"},
		{"unknown program's -o", "tool -o out in", "", "out:w in:r"},
		{"unknown program without the sandbox", "[strict] tool a", "", "a:w"},
		{"cd then relative", "cd sub && cat a", "", "sub:r sub/a:r"},
		{"cd absolute", "cd /etc && cat passwd", "", "/etc:r /etc/passwd:r"},
		{"cd in a subshell stays there", "(cd /etc; cat passwd); cat a", "", "error"},
		{"subshell", "(cat /etc/passwd)", "", "/etc/passwd:r"},
		{"pipeline", "cat a | grep x > o", "", "a:r o:w"},
		{"nested shell keeps the directory", "cd sub && sh -c 'cat a'", "", "sub:r sub/a:r"},
		{"nested shell keeps an unknown directory", "cd - && sh -c 'cat a'", "", "error"},
		{"nested shell, absolute paths after cd -", "cd - && sh -c 'cat /a'", "", "/a:r"},
		{"for list", "for f in /etc/*; do echo; done", "", "/etc/*:r"},
		{"relative program", "./run.sh arg", "", "./run.sh:r arg:r"},
		{"function body", "f() { rm a; }; f", "", "a:d"},
		{"command substitution runs", "x=$(rm a)", "", "a:d dynamic"},
		{"heredoc body is data", "cat <<EOF > out\n/etc/passwd\nEOF", "", "out:w"},
		{"here-string", "python3 <<< 'print(1)'", "", "inline"},
		{"[[ file test ]]", "[[ -f /etc/passwd ]] && echo y", "", "/etc/passwd:r"},
		{"[[ string test ]]", `[[ "$x" == /etc/* ]]`, "", "dynamic"},
		{"[[ -nt ]]", "[[ a -nt b ]]", "", "a:r b:r"},
		{"glob as command name", "/usr/bin/su[d]o ls", "", "refused"},
		{"sudo after &&", "ls && sudo rm x", "", "refused"},
		{"sudo in a subshell", "echo $(sudo id)", "", "refused"},
		{"parse error", "cat 'unterminated", "", "error"},
		{"NUL ends a $'' string", "cat $'a\\x00b'", "", "a:r"},
		{"cd - makes relative paths unknown", "cd - && cat a", "", "error"},
		{"cd in a pipe makes relative paths unknown", "cd /x | cat a", "", "error"},
		{"a long word is text", "mytool '" + strings.Repeat("x", 2000) + "'", "", ""},
		{"a long path is a path", "cat " + strings.Repeat("d/", 1000) + "f", "", strings.Repeat("d/", 1000) + "f:r"},

		// Commands a model writes every day (issue 9, item 10): none may be refused.
		{"[ -f x ]", "[ -f x ] && cat x", "", "x:r x:r"},
		{"if [ -d ]", "if [ -d sub ]; then echo y; fi", "", "sub:r"},
		{"test -f", "test -f a.txt", "", "a.txt:r"},
		{"multi-line python -c", "python3 -c 'import os\nfor f in os.listdir(\".\"):\n    print(f)\n'", "", "inline"},
		{"long python -c", "python3 -c '" + strings.Repeat("print(1); ", 100) + "'", "", "inline"},
		{"heredoc to a file", "cat > f.py <<'EOF'\nimport os\nprint(os.getcwd())\nEOF", "", "f.py:w"},
		{"cd and make", "cd sub && make", "", "sub:r"},
		{"for over a glob", "for f in *.go; do wc -l \"$f\"; done", "", "*.go:r dynamic"},
		{"2>&1 and tee", "go test ./... 2>&1 | tee out.txt", "", "test:r ./...:r out.txt:w"},
		{"sed -i", "sed -i 's/a/b/' a.txt", "", "a.txt:w"},
		{"git status", "git status", "", "status:r"},
		{"git commit, long message", "git commit -am '" + strings.Repeat("word ", 80) + "'", "", "commit:r"},
		{"npm test", "npm test", "", "test:r"},
		{"echo a paragraph", "echo '" + strings.Repeat("word ", 80) + "' > notes.md", "", "notes.md:w"},
		{"cut on slashes", "echo a/b | cut -d/ -f2", "", ""},
		{"tr slashes", "tr / _ < a", "", "a:r"},
		{"dirname", "dirname /etc/passwd", "", ""},
		{"grep an absolute pattern", "grep -rn /usr/bin .", "", ".:r"},
		{"find and grep", "find . -name '*.go' | xargs grep foo", "", ".:r"},
		{"command -v", "[strict] command -v python3", "", ""},
		{"mkdir and cd", "mkdir -p build && cd build && cmake ..", "", "build:w build:r build/..:r"},
		{"pip install -r", "pip install -r requirements.txt", "", "install:r requirements.txt:r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeIn(tt.command, tt.workDir)
			if want := items(tt.want); !slices.Equal(got, want) {
				t.Fatalf("%q:\n got  %s\n want %s", tt.command, strings.Join(got, " "), strings.Join(want, " "))
			}
		})
	}
}

// outcomeIn is outcome with a working directory.
func outcomeIn(cmd, workDir string) []string {
	if workDir == "" {
		return outcome(cmd)
	}
	a, err := Analyze(cmd, workDir, false)
	if err != nil {
		return []string{"error"}
	}
	var out []string
	for _, p := range a.Paths {
		out = append(out, p.Path+":"+p.Access.String()[:1])
	}
	slices.Sort(out)
	return out
}

// TestQuotedWords: quotes are removed, spaces stay in the word.
func TestQuotedWords(t *testing.T) {
	a, err := Analyze(`cat "my file.txt" 'b c' $'d\te' "a\$b" 'c\d' e\ f "g\h" "i\
j"`, "", false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range a.Paths {
		got = append(got, p.Path)
	}
	if want := []string{"my file.txt", "b c", "d\te", "a$b", `c\d`, "e f", `g\h`, "ij"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestPatterns: which words bash expands as patterns (every match is then judged).
func TestPatterns(t *testing.T) {
	for cmd, glob := range map[string]bool{
		"cat *.go": true, "cat a?": true, "cat [ab]": true, "cat x[[:alpha:]]": true, `cat "a"[b]`: true,
		"cat [": false, "cat a]": false, "cat '*'": false, `cat \*`: false, "cat []": false, `cat "[ab]"`: false,
	} {
		a, err := Analyze(cmd, "", false)
		if err != nil || len(a.Paths) != 1 || a.Paths[0].Glob != glob {
			t.Errorf("%s: %+v %v, want glob %v", cmd, a, err, glob)
		}
	}
}

// TestArgNames: each path says where in the command it comes from (denials quote it).
func TestArgNames(t *testing.T) {
	a, err := Analyze("rm -r old && cp -t dest a > log.txt && tar -C out -xf a.tar", "", false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range a.Paths {
		got = append(got, fmt.Sprintf("%s=%s:%s", p.Arg, p.Path, p.Access))
	}
	want := []string{
		"rm operand=old:delete", "cp -t=dest:write", "cp operand=a:read", "cp operand (in the destination)=dest/a:write", "redirect >=log.txt:write",
		"tar -C=out:write", "tar -f=a.tar:read",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestExpansions(t *testing.T) {
	for cmd, want := range map[string]string{
		"cat $HOME/x":           "$HOME",
		"cat ${HOME}":           "${HOME}",
		`cat "$(ls)"`:           "$(...)",
		"cat `ls`":              "backtick",
		"diff <(ls) <(ls /etc)": "process substitution",
		"echo $((1+2))":         "arithmetic",
		"cat <<EOF\n$(id)\nEOF": "$(...)",
		"ls @(a|b)":             "extended glob",
		"find . -exec rm {} +":  "find -exec",
		"ls | xargs rm":         "xargs",
	} {
		a, err := Analyze(cmd, "", false)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		if !strings.Contains(strings.Join(a.Dynamic, ";"), want) {
			t.Errorf("%q: dynamic = %v, want %q", cmd, a.Dynamic, want)
		}
	}
	for _, cmd := range []string{"echo 'literal $HOME'", `echo "a" b`, "ls -la", "echo \\$HOME", "find . -exec cat {} +"} {
		a, err := Analyze(cmd, "", false)
		if err != nil || len(a.Dynamic) > 0 {
			t.Errorf("%q: dynamic %v err %v; want none", cmd, a.Dynamic, err)
		}
	}
}

// TestBounds: what would cost too much to look at is refused with ErrTooLarge, quickly.
func TestBounds(t *testing.T) {
	for name, cmd := range map[string]string{
		"brace product":    "echo " + strings.Repeat("{a,b}", 30),
		"brace sequence":   "echo {1..5000000}",
		"int64 sequence":   "echo {-9223372036854775808..9223372036854775807}",
		"brace nested":     "echo " + strings.Repeat("{a,{b,c}}", 20),
		"many words":       "echo " + strings.Repeat("a ", MaxWords+1),
		"huge command":     strings.Repeat("x", MaxLen+1),
		"shells in shells": nestedShells(MaxDepth + 2),
		"many nodes":       "echo $((" + strings.Repeat("1+", MaxLen/2-10) + "1))",
		"brace in bash -c": "bash -c 'echo " + strings.Repeat("{a,b}", 30) + "'",
	} {
		if _, err := Analyze(cmd, "", false); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", name, err)
		}
	}
	for name, cmd := range map[string]string{
		"braces":           "mkdir -p src/{a,b,c}/{x,y} && touch src/{a,b,c}/{x,y}/f{1..10}.txt",
		"shells in shells": nestedShells(MaxDepth - 1),
		"deep subshells":   strings.Repeat("( ", 5000) + "cat a" + strings.Repeat(" )", 5000),
	} {
		if _, err := Analyze(cmd, "", false); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// nestedShells is sh -c 'sh -c ...' n deep, with the quoting each level needs.
func nestedShells(n int) string {
	cmd := "cat a"
	for range n {
		cmd = "sh -c " + shellQuote(cmd)
	}
	return cmd
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestDeleteAccess: what a command removes is a Delete, never a Write.
func TestDeleteAccess(t *testing.T) {
	a, err := Analyze("rm a; rmdir b; unlink c; mv d e; find f -delete", "", false)
	if err != nil {
		t.Fatal(err)
	}
	del := map[string]bool{}
	for _, p := range a.Paths {
		if p.Access == toolargs.Delete {
			del[p.Path] = true
		}
	}
	for _, p := range []string{"a", "b", "c", "d", "e", "f"} {
		if !del[p] {
			t.Errorf("%s is not a Delete: %+v", p, a.Paths)
		}
	}
}

// Commands lists every program a line runs, wherever it sits: what command-line allow and deny
// lists are matched against.
func TestAnalyzeCommands(t *testing.T) {
	tests := []struct{ command, want string }{
		{"python x.py", "python x.py"},
		{"cd src && python 'my file.py' > out.txt", "cd src | python my file.py"},
		{`"gi"t push --force`, "git push --force"},
		{"cat a | grep x; ls", "cat a | grep x | ls"},
		{"sh -c 'pip install x'", "sh -c pip install x | pip install x"},
		{"eval 'git push'", "eval git push | git push"},
		{"env FOO=1 pip install x", "env FOO=1 pip install x | pip install x"},
		{"echo $(git push)", "echo  | git push"},
		{"find . -exec rm {} +", "find . -exec rm {} + | rm <the paths find -exec passes on>"},
		{"X=1 python run.py", "python run.py"},
	}
	for _, tt := range tests {
		a, err := Analyze(tt.command, "", false)
		if err != nil {
			t.Errorf("%s: %v", tt.command, err)
			continue
		}
		if got := strings.Join(a.Commands, " | "); got != tt.want {
			t.Errorf("%s: commands %q, want %q", tt.command, got, tt.want)
		}
	}
}
