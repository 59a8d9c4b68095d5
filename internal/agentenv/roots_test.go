package agentenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/pathx"
	"github.com/massgen-go/massgen/internal/sandbox"
	"github.com/massgen-go/massgen/permissions"
)

const linkedContext = `agents:
  - id: alpha
    backend: {type: openai, model: m, cwd: ws_alpha}
orchestrator:
  context_paths: [{path: ctxlink, permission: write}]
`

// linkFixture is an agent whose context path is a link, ctxlink -> src, and a decoy folder the
// agent may not touch.
type linkFixture struct {
	dir, link, orig, decoy string
}

func newLinkFixture(t *testing.T) (*linkFixture, *Agent) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lf := &linkFixture{dir: dir, link: filepath.Join(dir, "ctxlink"), orig: filepath.Join(dir, "src"), decoy: filepath.Join(dir, "decoy")}
	write(t, filepath.Join(lf.orig, "a.txt"), "a")
	write(t, filepath.Join(lf.decoy, "secret.txt"), "secret")
	if err := os.Symlink(lf.orig, lf.link); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "cfg.yaml"), linkedContext)
	approve(t, filepath.Join(dir, "cfg.yaml"))
	cfg, _, err := configs.Load(configs.LoadOptions{Name: filepath.Join(dir, "cfg.yaml"), BaseDir: dir, Home: dir,
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Orchestrator.ContextPaths[0].Path; got != lf.link {
		t.Fatalf("the config gives the context path as %s, want the link %s", got, lf.link)
	}
	_, a := open(t, Options{Config: cfg}, "alpha")
	return lf, a
}

// retarget points the link at target atomically (a new link renamed over it).
func (lf *linkFixture) retarget(target, tmp string) error {
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, lf.link)
}

// check asserts that nothing the final role does acts on the decoy: the policy, a tool write
// (through the link and to the decoy), the command sandbox's policy and delivery's roots.
func (lf *linkFixture) check(t *testing.T, a *Agent, ts *filesystem.Toolset, pol *permissions.Policy, i int) {
	t.Helper()
	if d := pol.CheckPath(filepath.Join(lf.decoy, "x.txt"), permissions.Write); d.Allow {
		t.Fatalf("iteration %d: the policy allows writing into the link's new target: %+v", i, d)
	}
	if d := pol.CheckPath(filepath.Join(lf.orig, "x.txt"), permissions.Write); !d.Allow {
		t.Fatalf("iteration %d: the policy refuses the context path resolved at build: %+v", i, d)
	}
	for _, p := range []string{filepath.Join(lf.link, "y.txt"), filepath.Join(lf.decoy, "x.txt")} {
		args, _ := json.Marshal(map[string]string{"path": p, "content": "x"})
		ts.Call(t.Context(), "write_file", args)
	}
	for _, f := range []string{"x.txt", "y.txt"} {
		if _, err := os.Lstat(filepath.Join(lf.decoy, f)); err == nil {
			t.Fatalf("iteration %d: a tool wrote %s into the link's new target", i, f)
		}
	}
	sp := filesystem.SandboxPolicy(pol)
	for _, w := range slices.Concat(sp.Write, sp.Read) {
		if pathx.Within(lf.decoy, w) || pathx.Within(w, lf.decoy) {
			t.Fatalf("iteration %d: the command sandbox mounts %s (the link's new target %s)", i, w, lf.decoy)
		}
	}
	if !slices.Contains(sp.Write, lf.orig) {
		t.Fatalf("iteration %d: the command sandbox's writable roots %v lack the context path %s", i, sp.Write, lf.orig)
	}
	if got := a.Roots().Context[0].Path; got != lf.orig {
		t.Fatalf("iteration %d: delivery's context root is %s, want %s", i, got, lf.orig)
	}
}

// runCommand runs a real sandboxed command with the final role's policy that writes into the
// link's new target by its absolute path and through the link: neither may land there.
func (lf *linkFixture) runCommand(t *testing.T, pol *permissions.Policy, i int) {
	t.Helper()
	res, err := sandbox.Run(t.Context(), sandbox.Options{
		Command: "echo x > " + filepath.Join(lf.decoy, "cmd.txt") + "; echo y > " + filepath.Join(lf.link, "cmdlink.txt") +
			"; echo z > " + filepath.Join(lf.orig, "cmd.txt"),
		Dir: lf.orig, Policy: filesystem.SandboxPolicy(pol), Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatalf("iteration %d: sandbox: %v", i, err)
	}
	for _, f := range []string{"cmd.txt", "cmdlink.txt"} {
		if _, err := os.Lstat(filepath.Join(lf.decoy, f)); err == nil {
			t.Fatalf("iteration %d: a sandboxed command wrote %s into the link's new target (%+v)", i, f, res)
		}
	}
	if b, err := os.ReadFile(filepath.Join(lf.orig, "cmd.txt")); err != nil || strings.TrimSpace(string(b)) != "z" {
		t.Fatalf("iteration %d: the sandboxed command could not write into the context path (%v): %+v", i, err, res)
	}
}

func sandboxAvailable(t *testing.T) bool {
	t.Helper()
	m, err := sandbox.Effective(sandbox.ModeAuto)
	return err == nil && m != sandbox.ModeNone
}

// A context path given as a link, retargeted once after the agent's environment was built and
// before its final role's tools are made: the policy, the tools, the command sandbox and
// delivery all still act on the folder the link led to when the environment was built.
func TestContextLinkRetargetedAfterBuild(t *testing.T) {
	lf, a := newLinkFixture(t)
	if err := lf.retarget(lf.decoy, lf.link+".tmp"); err != nil {
		t.Fatal(err)
	}
	ts, err := a.Toolset(Final)
	if err != nil {
		t.Fatal(err)
	}
	g, err := a.Guard(Final)
	if err != nil {
		t.Fatal(err)
	}
	lf.check(t, a, ts, g.Policy(), 0)
	if sandboxAvailable(t) {
		lf.runCommand(t, g.Policy(), 0)
	} else {
		t.Log("no command sandbox here: the sandboxed command not run (its policy is still checked)")
	}
	if b, _ := os.ReadFile(filepath.Join(lf.decoy, "secret.txt")); string(b) != "secret" {
		t.Errorf("the decoy's file changed: %q", b)
	}
}

// The same with a goroutine retargeting the link between the two folders thousands of times
// while the final role is built and used.
func TestContextLinkRetargetRace(t *testing.T) {
	lf, a := newLinkFixture(t)
	var stop atomic.Bool
	var flips atomic.Int64
	var wg sync.WaitGroup
	racing := make(chan struct{})
	wg.Add(1)
	var once sync.Once
	go func() {
		defer wg.Done()
		defer once.Do(func() { close(racing) })
		for i := 0; !stop.Load(); i++ {
			if i == 10 {
				once.Do(func() { close(racing) }) // the race is on before the final role is built
			}
			target := lf.decoy
			if i%2 == 1 {
				target = lf.orig
			}
			if err := lf.retarget(target, lf.link+".race"); err != nil {
				t.Error(err)
				return
			}
			flips.Add(1)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	<-racing
	ts, err := a.Toolset(Final)
	if err != nil {
		t.Fatal(err)
	}
	g, err := a.Guard(Final)
	if err != nil {
		t.Fatal(err)
	}
	n := 2000
	if testing.Short() {
		n = 300
	}
	commands := sandboxAvailable(t)
	if !commands {
		t.Log("no command sandbox here: sandboxed commands not run (their policy is still checked)")
	}
	for i := range n {
		lf.check(t, a, ts, g.Policy(), i)
		if commands && i%200 == 0 {
			lf.runCommand(t, g.Policy(), i)
		}
	}
	stop.Store(true)
	wg.Wait()
	if flips.Load() < 100 {
		t.Fatalf("only %d retargets raced the checks", flips.Load())
	}
	t.Logf("%d checks against %d retargets", n, flips.Load())
}
