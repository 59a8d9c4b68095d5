package permissions

import (
	"errors"
	"strings"
	"testing"
)

func TestCommandExtraction(t *testing.T) {
	tests := []struct {
		name    string
		command string
		workDir string
		want    string // fmtPaths of the paths, or "DANGER"/"ERR"
	}{
		{"plain read", "cat a.txt", "", "cat operand=a.txt:read"},
		{"work dir joins relative words", "cat a.txt", "sub", "work_dir=sub:read cat operand=sub/a.txt:read"},
		{"redirect out", "echo hi > out.txt", "", "echo operand=hi:read redirect >=out.txt:write"},
		{"redirect append", "echo hi >> /etc/x", "", "echo operand=hi:read redirect >>=/etc/x:write"},
		{"redirect in", "wc -l < in.txt", "", "redirect <=in.txt:read"},
		{"fd dup is not a file", "make 2>&1", "", ""},
		{"dev null is fine", "make 2>/dev/null", "", ""},
		{"cp: destination written", "cp a b", "", "cp operand=a:read cp operand=b:write"},
		{"cp -t", "cp -t dest a b", "", "option -t=dest:write cp operand=a:read cp operand=b:read"},
		{"mv: both written", "mv a b", "", "mv operand=a:write mv operand=b:write"},
		{"touch/mkdir", "touch x && mkdir -p d/e", "", "touch operand=x:write mkdir operand=d/e:write"},
		{"tee", "ls | tee log.txt", "", "tee operand=log.txt:write"},
		{"sed -i", "sed -i 's/a/b/' f.txt", "", "sed operand=f.txt:write"},
		{"sed -e -i", "sed -i -e 's/a/b/' f.txt", "", "sed operand=f.txt:write"},
		{"sed -e: every operand is a file", "sed -e s/a/b/ /etc/passwd", "", "sed operand=/etc/passwd:read"},
		{"perl -e script is not a path", "perl -e 'print 1' in.txt", "", "perl operand=in.txt:read"},
		{"env -C runs elsewhere", "env -C /etc cat passwd", "", "env operand=/etc:read env --chdir=/etc:read cat operand=/etc/passwd:read"},
		{"env --chdir=", "env --chdir=/etc cat passwd", "", "option --chdir=/etc=/etc:read env --chdir=/etc:read cat operand=/etc/passwd:read"},
		{"find -execdir relative words cannot be placed", "find . -execdir cat passwd ;", "", "ERR"},
		{"sed without -i reads", "sed 's/a/b/' f.txt", "", "sed operand=f.txt:read"},
		{"quotes are removed", `cat "my file.txt" 'b c'`, "", "cat operand=my file.txt:read cat operand=b c:read"},
		{"escapes are removed", `cat /et\c/passwd`, "", "cat operand=/etc/passwd:read"},
		{"brace expansion", "cat {/etc/passwd,x}", "", "cat operand=/etc/passwd:read cat operand=x:read"},
		{"tilde", "cat ~/notes", "", "cat operand=~/notes:read"},
		{"quoted tilde is a name", "cat '~/notes'", "", "cat operand=./~/notes:read"},
		{"option with attached path", "gcc -o/etc/x main.c", "", "option -o/etc/x=/etc/x:write gcc operand=main.c:read"},
		{"option=path", "tool --config=/etc/shadow", "", "option --config=/etc/shadow=/etc/shadow:read"},
		{"curl -o", "curl -o out.html https://x/y", "", "option -o=out.html:write curl operand=https://x/y:read"},
		{"dd of", "dd if=a of=b", "", "dd if=a:read dd of=b:write"},
		{"cd then relative", "cd sub && cat a", "", "cd=sub:read cat operand=sub/a:read"},
		{"cd absolute", "cd /etc && cat passwd", "", "cd=/etc:read cat operand=/etc/passwd:read"},
		{"subshell", "(cat /etc/passwd)", "", "cat operand=/etc/passwd:read"},
		{"pipeline", "cat a | grep x > o", "", "cat operand=a:read grep operand=x:read redirect >=o:write"},
		{"bash -c is parsed", `bash -c "cat /etc/passwd"`, "", "cat operand=/etc/passwd:read"},
		{"eval is parsed", `eval cat /etc/shadow`, "", "cat operand=/etc/shadow:read"},
		{"find -exec", "find . -name x -exec cat /etc/passwd ;", "", "cat operand=/etc/passwd:read find operand=.:read find operand=x:read find operand=cat:read find operand=/etc/passwd:read"},
		{"for list", "for f in /etc/*; do echo; done", "", "for-list=/etc/*:read"},
		{"relative program", "./run.sh arg", "", "program=./run.sh:read run.sh operand=arg:read"},
		{"sudoku is fine", "echo sudoku", "", "echo operand=sudoku:read"},
		{"model small is fine", "python3 run.py --model small", "", "python3 operand=run.py:read python3 operand=small:read"},
		{"ls --format long is fine", "ls --format long", "", "ls operand=long:read"},
		{"heredoc body is data", "cat <<EOF > out\n/etc/passwd\nEOF", "", "redirect >=out:write"},
		{"ln hard link: source needs write", "ln /p/a b", "", "ln operand=/p/a:write ln operand=b:write"},
		{"ln -s: source read", "ln -s /p/a b", "", "ln operand=/p/a:read ln operand=b:write"},
		{"sudo", "sudo ls", "", "DANGER"},
		{"sudo by path", "/usr/bin/sudo ls", "", "DANGER"},
		{"escaped sudo", `\sudo ls`, "", "DANGER"},
		{"quoted sudo", `'sudo' ls`, "", "DANGER"},
		{"su", "su - root", "", "DANGER"},
		{"chmod", "chmod 777 f", "", "DANGER"},
		{"chown", "chown me f", "", "DANGER"},
		{"mkfs.ext4", "mkfs.ext4 /dev/sda1", "", "DANGER"},
		{"fdisk", "fdisk -l", "", "DANGER"},
		{"rm -rf /", "rm -rf /", "", "DANGER"},
		{"rm -r -f /*", "rm -r -f /*", "", "DANGER"},
		{"rm -rf //", "rm -rf //", "", "DANGER"},
		{"dd to a device", "dd if=x of=/dev/sda", "", "DANGER"},
		{"sudo after &&", "ls && sudo rm x", "", "DANGER"},
		{"sudo in a subshell", "echo $(sudo id)", "", "DANGER"},
		{"sudo through env", "env FOO=1 sudo ls", "", "DANGER"},
		{"sudo through xargs", "echo x | xargs sudo rm", "", "DANGER"},
		{"chmod through timeout", "timeout 5 chmod +x f", "", "DANGER"},
		{"sudo in bash -c", `sh -c 'sudo ls'`, "", "DANGER"},
		{"chmod in find -exec", "find . -exec chmod 777 {} ;", "", "DANGER"},
		{"glob as command name", "/usr/bin/su[d]o ls", "", "DANGER"},
		{"tar x writes the working directory", "tar xf a.tar", "", "tar (extracts into the working directory)=.:write tar operand=xf:read tar operand=a.tar:read"},
		{"tar -C writes there", "tar -xf a.tar -C out", "", "option -C=out:write tar operand=a.tar:read"},
		{"unzip writes the working directory", "unzip a.zip", "", "unzip (extracts into the working directory)=.:write unzip operand=a.zip:read"},
		{"parse error", "cat 'unterminated", "", "ERR"},
		{"cd - makes relative paths unknown", "cd - && cat a", "", "ERR"},
		{"cd in a pipe makes relative paths unknown", "cd /x | cat a", "", "ERR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := analyzeCommand(tt.command, tt.workDir, false)
			switch tt.want {
			case "DANGER":
				if !errors.Is(err, errDangerous) {
					t.Fatalf("want a dangerous-command error, got %v", err)
				}
				return
			case "ERR":
				if err == nil {
					t.Fatalf("want an error, got %s", fmtPaths(a.paths))
				}
				return
			}
			if err != nil {
				t.Fatalf("analyzeCommand: %v", err)
			}
			if got := fmtPaths(a.paths); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCommandExpansions(t *testing.T) {
	for cmd, want := range map[string]string{
		"cat $HOME/x":           "$HOME",
		"cat ${HOME}":           "${HOME}",
		`cat "$(ls)"`:           "$(...)",
		"cat `ls`":              "backtick",
		"diff <(ls) <(ls /etc)": "process substitution",
		"echo $((1+2))":         "arithmetic",
		"cat <<EOF\n$(id)\nEOF": "$(...)",
	} {
		a, err := analyzeCommand(cmd, "", false)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		if len(a.dynamic) == 0 || !strings.Contains(strings.Join(a.dynamic, ";"), want) {
			t.Errorf("%q: dynamic = %v, want %q", cmd, a.dynamic, want)
		}
	}
	for _, cmd := range []string{"echo 'literal $HOME'", `echo "a" b`, "ls -la", "echo \\$HOME"} {
		a, err := analyzeCommand(cmd, "", false)
		if err != nil || len(a.dynamic) > 0 {
			t.Errorf("%q: dynamic %v err %v; want none", cmd, a.dynamic, err)
		}
	}
}
