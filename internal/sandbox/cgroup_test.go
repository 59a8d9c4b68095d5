//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/testing/lane"
	"go.uber.org/zap/zaptest"
)

// TestFindCgroupHomes: where per-command cgroups go, from mountinfo and /proc/self/cgroup, on
// fake cgroup trees (this machine has one layout only): the nearest v2 ancestor that hands
// out the controllers (never massgen's own cgroup, which has processes), else cgroup v1.
func TestFindCgroupHomes(t *testing.T) {
	type tree map[string]string // directory (relative to the fake root) -> cgroup.subtree_control ("-": none)
	tests := []struct {
		name      string
		mounts    []string // "fstype dir superopts" (dir relative to the fake root)
		cgroup    string
		dirs      tree
		want      []cgroupHome // dir relative to the fake root
		wantNoDir bool
	}{
		{
			name:   "hybrid: v2 without controllers, v1 memory and pids",
			mounts: []string{"cgroup2 unified rw", "cgroup memory rw,memory", "cgroup pids rw,pids", "cgroup cpu,cpuacct rw,cpu,cpuacct"},
			cgroup: "4:memory:/process_api/x\n8:pids:/\n1:cpu,cpuacct:/\n0::/\n",
			dirs:   tree{"unified": "", "memory/process_api/x": "-", "pids": "-"},
			want:   []cgroupHome{{dir: "memory/process_api/x", mem: true}, {dir: "pids", pids: true}},
		},
		{
			name:   "v2, delegated user service: the nearest ancestor with the controllers",
			mounts: []string{"cgroup2 cg rw,nsdelegate"},
			cgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope\n",
			dirs: tree{"cg": "cpu memory pids", "cg/user.slice": "memory pids", "cg/user.slice/user-1000.slice": "memory pids",
				"cg/user.slice/user-1000.slice/user@1000.service":                      "cpu memory pids",
				"cg/user.slice/user-1000.slice/user@1000.service/app.slice":            "memory pids",
				"cg/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope": ""},
			want: []cgroupHome{{dir: "cg/user.slice/user-1000.slice/user@1000.service/app.slice", v2: true, mem: true, pids: true}},
		},
		{
			name:   "v2, massgen in the root cgroup",
			mounts: []string{"cgroup2 cg rw"},
			cgroup: "0::/\n",
			dirs:   tree{"cg": "memory pids"},
			want:   []cgroupHome{{dir: "cg", v2: true, mem: true, pids: true}},
		},
		{
			name:   "v2 with memory only, pids from v1",
			mounts: []string{"cgroup2 cg rw", "cgroup pids rw,pids"},
			cgroup: "0::/a/b\n3:pids:/a\n",
			dirs:   tree{"cg": "memory", "cg/a": "memory", "cg/a/b": "", "pids/a": "-"},
			want:   []cgroupHome{{dir: "cg/a", v2: true, mem: true}, {dir: "pids/a", pids: true}},
		},
		{
			name:   "no controllers anywhere",
			mounts: []string{"cgroup2 cg rw"},
			cgroup: "0::/a\n",
			dirs:   tree{"cg": "", "cg/a": ""},
		},
		{
			name:   "a mount point with a space",
			mounts: []string{`cgroup2 my\040cg rw`},
			cgroup: "0::/\n",
			dirs:   tree{"my cg": "pids"},
			want:   []cgroupHome{{dir: "my cg", v2: true, pids: true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for d, ctrl := range tc.dirs {
				p := filepath.Join(root, d)
				mustWrite(t, filepath.Join(p, "cgroup.procs"), "")
				if ctrl != "-" {
					mustWrite(t, filepath.Join(p, "cgroup.subtree_control"), ctrl+"\n")
				}
			}
			var mi strings.Builder
			for i, m := range tc.mounts {
				f := strings.Fields(m)
				fmt.Fprintf(&mi, "%d 1 0:%d / %s rw,nosuid - %s %s %s\n", 30+i, 20+i, filepath.Join(root, f[1]), f[0], f[0], f[2])
			}
			mustWrite(t, filepath.Join(root, "mountinfo"), mi.String())
			mustWrite(t, filepath.Join(root, "cgroup"), tc.cgroup)
			got := findCgroupHomes(filepath.Join(root, "mountinfo"), filepath.Join(root, "cgroup"))
			for i := range got {
				got[i].dir = strings.TrimPrefix(got[i].dir, root+"/")
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("homes = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestCmdCgroupFiles: a command's cgroups get its limits in each version's files, and the
// events are counted per command when a cgroup is used again (fake files: the kernel's own
// would refuse these writes).
func TestCmdCgroupFiles(t *testing.T) {
	root := t.TempDir()
	v2, v1m, v1p := filepath.Join(root, "v2"), filepath.Join(root, "mem"), filepath.Join(root, "pids")
	lim := Limits{MemoryMB: 300, Processes: 70}.WithDefaults()
	name := "massgen-1-1"
	cg := &cmdCgroup{lim: lim}
	for _, h := range []cgroupHome{{dir: v2, v2: true, mem: true, pids: true}, {dir: v1m, mem: true}, {dir: v1p, pids: true}} {
		d := cmdCgroupDir{cgroupHome: h, path: filepath.Join(h.dir, name)}
		if err := os.MkdirAll(d.path, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := d.setLimits(lim); err != nil {
			t.Fatal(err)
		}
		cg.dirs = append(cg.dirs, d)
	}
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	for file, want := range map[string]string{
		filepath.Join(v2, name, "memory.max"): "314572800", filepath.Join(v2, name, "memory.swap.max"): "0",
		filepath.Join(v2, name, "pids.max"): "70", filepath.Join(v1m, name, "memory.limit_in_bytes"): "314572800",
		filepath.Join(v1p, name, "pids.max"): "70",
	} {
		if got := read(file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if h := cg.hits(); len(h) != 0 {
		t.Errorf("fresh: %v", h)
	}
	mustWrite(t, filepath.Join(v2, name, "memory.events"), "low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n")
	mustWrite(t, filepath.Join(v1p, name, "pids.events"), "max 5\n")
	want := "killed: memory limit 300 MiB; process limit 70 reached: new processes or threads refused (5 times)"
	if got := limitMessage(cg.hits()); got != want {
		t.Errorf("hits = %q, want %q", got, want)
	}
	// The next command in the same cgroups: only its own events count.
	if h := cg.hits(); len(h) != 0 {
		t.Errorf("reused: %v", h)
	}
	mustWrite(t, filepath.Join(v1p, name, "pids.events"), "max 6\n")
	if got := limitMessage(cg.hits()); got != "process limit 70 reached: new processes or threads refused (1 times)" {
		t.Errorf("reused, one refusal: %q", got)
	}
}

// TestCgroupReuse: a cgroup a command left empty serves the next command with that command's
// limits, raised or lowered (cgroup v1 keeps memory under memory+swap: raising needs the
// other order), and its events count for that command only.
func TestCgroupReuse(t *testing.T) {
	lane.Long(t)
	if len(cgroupsHere.get()) == 0 {
		t.Skip("no cgroup massgen may use here")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	for _, mode := range modes(t) {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			reused := 0
			for i, c := range []struct {
				lim     Limits
				command string
				want    string
			}{
				{Limits{MemoryMB: 96, Processes: 40}, `python3 -c "b = b'x' * (1 << 30)"`, "killed: memory limit 96 MiB"},
				{Limits{}, `python3 -c "b = b'x' * (200 << 20); print(len(b))"`, ""},
				{Limits{MemoryMB: 64}, `python3 -c "b = b'x' * (200 << 20)"`, "killed: memory limit 64 MiB"},
				{Limits{MemoryMB: 2048}, "true", ""},
			} {
				cgroupsHere.mu.Lock()
				idle := len(cgroupsHere.idle)
				cgroupsHere.mu.Unlock()
				if idle > 0 {
					reused++
				}
				res, err := Run(context.Background(), withMode(mode, Options{Command: c.command, Dir: f.ws, Policy: f.pol,
					Timeout: 30 * time.Second, Limits: c.lim, Log: zaptest.NewLogger(t)}))
				if err != nil {
					t.Fatalf("command %d: %v", i, err)
				}
				if res.Limit != c.want || c.want == "" && res.ExitCode != 0 {
					t.Errorf("command %d: %+v, want limit %q", i, res, c.want)
				}
			}
			if reused == 0 {
				t.Errorf("no cgroup was reused")
			}
		})
	}
}
