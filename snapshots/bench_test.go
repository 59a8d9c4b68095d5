package snapshots

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The benchmark workspace: 10,000 files, 100 MB, in 100 directories, made once per process.
const (
	benchDirs     = 100
	benchPerDir   = 100
	benchFileSize = 10 << 10 // 10,000 x 10 KiB = 100 MiB (sizes vary +-50%, same total)
)

var (
	benchOnce sync.Once
	benchBase string
	benchWS   string
	benchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchBase != "" {
		os.RemoveAll(benchBase)
	}
	os.Exit(code)
}

func benchWorkspace(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		benchBase, benchErr = os.MkdirTemp("", "massgen-snapshot-bench-")
		if benchErr != nil {
			return
		}
		benchWS = filepath.Join(benchBase, "workspace")
		rng := rand.New(rand.NewPCG(1, 2))
		buf := make([]byte, 2*benchFileSize)
		for d := range benchDirs {
			dir := filepath.Join(benchWS, fmt.Sprintf("pkg%02d", d/10), fmt.Sprintf("mod%03d", d))
			if benchErr = os.MkdirAll(dir, 0o755); benchErr != nil {
				return
			}
			for f := range benchPerDir {
				n := benchFileSize/2 + (f*benchFileSize/benchPerDir)%benchFileSize
				for i := range n {
					buf[i] = byte(rng.Uint32())
				}
				if benchErr = os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d.go", f)), buf[:n], 0o644); benchErr != nil {
					return
				}
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchWS
}

// The machine is shared and writeback of earlier iterations' data lands on later ones, so each
// benchmark times `cp -a` of the same workspace between its own iterations (timer stopped,
// like the measured op) and reports "x_cp": how many times faster than `cp -a` an op is.
type cpRef struct {
	total time.Duration
	n     int
}

func (c *cpRef) measure(b *testing.B) {
	b.StopTimer()
	defer b.StartTimer()
	dst := filepath.Join(benchBase, "cp-ref")
	start := time.Now()
	if out, err := exec.Command("cp", "-a", benchWS, dst).CombinedOutput(); err != nil {
		b.Fatalf("cp -a: %v: %s", err, out)
	}
	c.total += time.Since(start)
	c.n++
	os.RemoveAll(dst)
}

func (c *cpRef) report(b *testing.B) {
	cp := float64(c.total.Nanoseconds()) / float64(c.n)
	op := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(cp/op, "x_cp")
	b.ReportMetric(cp/1e6, "cp_ms")
}

func benchStore(b *testing.B, agents []string, withLog bool) *Store {
	b.Helper()
	dir := b.TempDir()
	o := Options{
		SnapshotRoot: filepath.Join(dir, "snapshots"),
		TempRoot:     filepath.Join(dir, "temp"),
		Agents:       agents,
	}
	if withLog {
		o.LogDir = filepath.Join(dir, "logs")
	}
	s, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchCopyOfWorkspace gives each agent of the temp-fill benchmark a workspace of its own.
func benchCopyOfWorkspace(b *testing.B, name string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), name)
	if out, err := exec.Command("cp", "-a", benchWorkspace(b), dst).CombinedOutput(); err != nil {
		b.Fatalf("cp -a: %v: %s", err, out)
	}
	return dst
}

func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	ws := benchWorkspace(b)

	b.Run("cp-a", func(b *testing.B) {
		dst := filepath.Join(b.TempDir(), "copy")
		for b.Loop() {
			b.StopTimer()
			b.StartTimer()
			if out, err := exec.Command("cp", "-a", ws, dst).CombinedOutput(); err != nil {
				b.Fatalf("cp -a: %v: %s", err, out)
			}
			b.StopTimer()
			os.RemoveAll(dst)
			b.StartTimer()
		}
	})

	for _, withLog := range []bool{false, true} {
		suffix := "/nolog"
		if withLog {
			suffix = "/withlog"
		}
		b.Run("first"+suffix, func(b *testing.B) {
			var cp cpRef
			for b.Loop() {
				cp.measure(b)
				b.StopTimer()
				s := benchStore(b, []string{"a"}, withLog)
				b.StartTimer()
				if _, err := s.Save(ctx, "a", ws, "answer"); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				os.RemoveAll(s.o.SnapshotRoot)
				os.RemoveAll(s.o.LogDir)
				b.StartTimer()
			}
			cp.report(b)
		})

		b.Run("unchanged"+suffix, func(b *testing.B) {
			s := benchStore(b, []string{"a"}, withLog)
			for range 2 { // the second save settles racily-clean files
				if _, err := s.Save(ctx, "a", ws, "answer"); err != nil {
					b.Fatal(err)
				}
			}
			var cp cpRef
			for b.Loop() {
				cp.measure(b)
				if _, err := s.Save(ctx, "a", ws, "vote"); err != nil {
					b.Fatal(err)
				}
			}
			cp.report(b)
		})

		b.Run("one-changed"+suffix, func(b *testing.B) {
			own := benchCopyOfWorkspace(b, "ws")
			s := benchStore(b, []string{"a"}, withLog)
			for range 2 {
				if _, err := s.Save(ctx, "a", own, "answer"); err != nil {
					b.Fatal(err)
				}
			}
			p := filepath.Join(own, "pkg05", "mod050", "file050.go")
			var cp cpRef
			for i := 0; b.Loop(); i++ {
				cp.measure(b)
				b.StopTimer()
				if err := os.WriteFile(p, fmt.Appendf(nil, "change %d", i), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := s.Save(ctx, "a", own, "answer"); err != nil {
					b.Fatal(err)
				}
			}
			cp.report(b)
		})
	}

	// Temp fill for a 4-agent run: every agent's temp workspace gets the 3 others' snapshots.
	agents := []string{"a", "b", "c", "d"}
	setup4 := func(b *testing.B) (*Store, map[string]string) {
		s := benchStore(b, agents, true)
		wss := map[string]string{}
		for _, a := range agents {
			wss[a] = benchCopyOfWorkspace(b, "ws-"+a)
			if _, err := s.Save(ctx, a, wss[a], "answer"); err != nil {
				b.Fatal(err)
			}
		}
		return s, wss
	}
	fillAll := func(b *testing.B, s *Store) {
		for _, a := range agents {
			if err := s.FillTemp(ctx, a); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("filltemp-4-agents/cold", func(b *testing.B) {
		s, _ := setup4(b)
		var cp cpRef
		for b.Loop() {
			cp.measure(b)
			b.StopTimer()
			for _, a := range agents {
				os.RemoveAll(s.TempDir(a))
			}
			b.StartTimer()
			fillAll(b, s)
		}
		cp.report(b)
	})
	b.Run("filltemp-4-agents/one-changed", func(b *testing.B) {
		s, wss := setup4(b)
		fillAll(b, s)
		p := filepath.Join(wss["a"], "pkg05", "mod050", "file050.go")
		var cp cpRef
		for i := 0; b.Loop(); i++ {
			cp.measure(b)
			b.StopTimer()
			if err := os.WriteFile(p, fmt.Appendf(nil, "change %d", i), 0o644); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Save(ctx, "a", wss["a"], "answer"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			fillAll(b, s)
		}
		cp.report(b)
	})
}
