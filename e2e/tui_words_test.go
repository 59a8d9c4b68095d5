package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// TestPromptWordsInTmux drives interactive mode on a terminal (tmux): help, /clear and a
// one-word input answered "n" start no run (the fake provider gets no request); a one-word
// input answered "y" does; exit leaves with 0.
func TestPromptWordsInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (.ci/run installs it)")
	}
	bin := testbin.For(t)
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	srv := fakeprovider.New(fakeprovider.Agreeable())
	t.Cleanup(srv.Close)
	// No workspace: no context-path prompt before the first task.
	writeFile(t, filepath.Join(dir, "c.yaml"), fmt.Sprintf("agents:\n  - id: solo\n    backend: {type: chatcompletion, model: fake-model, base_url: %q}\n",
		srv.BaseURL("chatcompletion")))

	sock := fmt.Sprintf("massgen-words-%d", os.Getpid())
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	script := fmt.Sprintf("cd %q && HOME=%q NO_COLOR=1 %q --config c.yaml --display plain; echo EXIT=$?; sleep 60", dir, home, bin)
	tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "50", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })

	// waitFor polls the pane until it shows want n times.
	waitFor := func(want string, n int) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		var pane string
		for time.Now().Before(deadline) {
			pane = tmux("capture-pane", "-p", "-t", "t", "-S", "-200")
			if strings.Count(pane, want) >= n {
				return pane
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("pane never showed %q %d times:\n%s", want, n, pane)
		return ""
	}
	typeLine := func(s string) {
		tmux("send-keys", "-t", "t", "-l", s)
		tmux("send-keys", "-t", "t", "Enter")
	}
	waitFor("massgen>", 1)
	typeLine("help")
	waitFor("/clear ", 1) // the command list
	waitFor("massgen>", 2)
	typeLine("/clear")
	waitFor("New session", 1)
	waitFor("massgen>", 3)
	typeLine("clear")
	waitFor(`"clear" is a single word`, 1)
	typeLine("n")
	waitFor("Not run.", 1)
	waitFor("massgen>", 4)
	if n := srv.Count(); n != 0 {
		t.Fatalf("%d model requests: a command or an unconfirmed word started a run", n)
	}
	typeLine("summarize")
	waitFor(`"summarize" is a single word`, 1)
	typeLine("y")
	waitFor("Final answer from fake-model.", 1)
	waitFor("massgen>", 5)
	typeLine("exit")
	pane := waitFor("EXIT=", 1)
	if !strings.Contains(pane, "EXIT=0") {
		t.Errorf("exit did not leave with 0:\n%s", pane)
	}
	if srv.Count() == 0 {
		t.Error("the confirmed one-word task did not run")
	}
}
