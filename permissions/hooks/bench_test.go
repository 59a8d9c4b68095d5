package hooks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/launch"
	"github.com/massgen-go/massgen/internal/sysshell"
)

// BenchmarkHookRun: what running a hook costs. "as written" is main's way (sh -c on the line,
// the script opened by path); "approved copy" checks the script's identity, hashes it only
// when it changed, and runs the private copy; "first run" also hashes and copies it.
func BenchmarkHookRun(b *testing.B) {
	dir := b.TempDir()
	script := filepath.Join(dir, "audit.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	hs, err := Prepare([]configs.Hook{{Command: "./audit.sh"}}, dir, os.Environ())
	if err != nil {
		b.Fatal(err)
	}
	area, err := launch.NewArea(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer area.Close()
	b.Run("as written", func(b *testing.B) {
		for b.Loop() {
			cmd, _ := sysshell.Command(context.Background(), script)
			cmd.Dir = dir
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("approved copy", func(b *testing.B) {
		images := launch.NewImages(area)
		defer images.Close()
		r := &Runner{Area: area, Images: images}
		for b.Loop() {
			if res, err := r.Run(context.Background(), hs[0], Input{}, os.Environ()); err != nil || res.Code != 0 {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("first run", func(b *testing.B) {
		for b.Loop() {
			images := launch.NewImages(area)
			r := &Runner{Area: area, Images: images}
			if res, err := r.Run(context.Background(), hs[0], Input{}, os.Environ()); err != nil || res.Code != 0 {
				b.Fatal(res, err)
			}
			images.Close()
		}
	})
}

// BenchmarkAnalyze: reading a hook's command line when the rules load.
func BenchmarkAnalyze(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "audit.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Analyze(`read -r line; echo "$line" | env FOO=1 ./audit.sh --strict && exit 0`, dir, os.Environ()); err != nil {
			b.Fatal(err)
		}
	}
}
