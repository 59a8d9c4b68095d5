//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/massgen-go/massgen/internal/sandbox/internal/confine"
)

// Landlock mode needs no helper process: the ruleset is built here from the plan's handles,
// and the command is forked from a dedicated OS thread that confined itself first. Everything
// that confines is per thread and inherited by a child forked from that thread (the Landlock
// domain and no_new_privs, the capability sets, the seccomp filter); the thread is locked and
// never unlocked, so it runs nothing else and ends with its goroutine (Go creates other
// threads from a template thread, never by cloning a locked one). This avoids re-executing
// massgen, whose start costs more than the command.

// ruleNodes is the plan for the ruleset built in this process (the plan's own handles).
func (pl *plan) ruleNodes() []confine.RuleNode {
	var out []confine.RuleNode
	var walk func(n *node, parent int)
	walk = func(n *node, parent int) {
		out = append(out, confine.RuleNode{FD: n.fd, Parent: parent, Dev: n.id.Dev, Ino: n.id.Ino, Typ: n.typ, St: n.st,
			MinBelow: n.minBelow, PrivBelow: n.privBelow, HideBelow: n.hideBelow})
		me := len(out) - 1
		for _, k := range n.kids {
			walk(k, me)
		}
	}
	walk(pl.root, -1)
	return out
}

// landlockRuleset is the plan's Landlock ruleset (its descriptor; the caller closes it).
func (pl *plan) landlockRuleset(net confine.LandlockNet) (int, error) {
	return confine.LandlockRuleset(pl.ruleNodes(), net)
}

// startConfined starts cmd from a new OS thread confined by confine, and waits for it there
// (a parent-death signal follows the thread that forked). began, when set, runs on that thread
// once the process started and before anything waits for it (so its pid cannot be reused
// meanwhile); an error from it kills the process and is a set-up error. wait returns
// cmd.Wait's error.
func startConfined(cmd *exec.Cmd, confine func() error, began func(*os.Process) error) (wait func() error, setupErr, startErr error) {
	type started struct{ setup, start error }
	sc := make(chan started, 1)
	wc := make(chan error, 1)
	// Never unlocked: the confined thread ends with the function.
	ended := onDedicatedThread(func() {
		if err := confine(); err != nil {
			sc <- started{setup: err}
			return
		}
		err := cmd.Start()
		if err == nil && began != nil {
			if berr := began(cmd.Process); berr != nil {
				cmd.Process.Kill()
				cmd.Wait()
				sc <- started{setup: berr}
				return
			}
		}
		sc <- started{start: err}
		if err == nil {
			wc <- cmd.Wait()
		}
	})
	s := <-sc
	if s.setup != nil || s.start != nil {
		ended()
		return func() error { return s.start }, s.setup, s.start
	}
	return func() error {
		err := <-wc
		ended()
		return err
	}, nil, nil
}

// pidNS is how a Landlock command gets its own PID namespace, probed once: when the command's
// first process (the shell) ends, the kernel kills every process left in it, so nothing a
// command starts outlives it, setsid or not. As root CLONE_NEWPID is enough; otherwise a user
// namespace comes with it (unmapped: the confined thread cannot write /proc/<pid>/uid_map, and
// the command keeps the user's kernel uid all the same, shown as 65534); where neither is
// allowed the command shares massgen's (ok is false).
type pidNS struct {
	once sync.Once
	attr syscall.SysProcAttr
	ok   bool
}

var landlockPIDNS pidNS

func (p *pidNS) get() (syscall.SysProcAttr, bool) {
	p.once.Do(func() {
		candidates := []syscall.SysProcAttr{{Cloneflags: syscall.CLONE_NEWPID}}
		if syscall.Geteuid() != 0 {
			candidates = append(candidates, syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID})
		}
		for _, c := range candidates {
			cmd := exec.Command("/bin/true")
			attr := c
			cmd.SysProcAttr = &attr
			if cmd.Run() == nil {
				p.attr, p.ok = c, true
				return
			}
		}
	})
	return p.attr, p.ok
}
