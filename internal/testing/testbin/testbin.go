// Package testbin gives tests the massgen binary built from this checkout. It is built at most
// once per state of the sources: every test package of one `go test ./...` run (each its own
// process, several at a time) shares one build, found by a hash of what goes into the binary.
package testbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen/internal/runlock"
	"github.com/massgen-go/massgen/internal/testing/lane"
)

// Path returns the path of a massgen binary built from the module this package belongs to,
// building it when no build of the current sources exists yet. Concurrent callers (other test
// processes) wait for one build instead of starting their own.
func Path() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	key, err := sourceKey(root)
	if err != nil {
		return "", fmt.Errorf("testbin: hashing the sources: %w", err)
	}
	cache := filepath.Join(os.TempDir(), "massgen-testbin")
	lock, err := runlock.Acquire(context.Background(), cache, runlock.Holder{PID: os.Getpid(), Command: "go test"}, true, nil)
	if err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	defer lock.Release()
	name := "massgen"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(cache, key, name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o700); err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	tmp := bin + ".building"
	build := exec.Command("go", "build", "-o", tmp, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testbin: go build: %w\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	prune(cache, key)
	return bin, nil
}

// moduleRoot is the folder holding go.mod, found from this source file's place in it.
func moduleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("testbin: cannot locate the module")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testbin: no go.mod above " + filepath.Dir(file))
		}
		dir = parent
	}
}

// sourceKey hashes every file a build can read: go.mod, go.sum and every file of every package
// folder except tests and testdata (embedded files included). Tests do not change the binary.
func sourceKey(root string) (string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.HasSuffix(name, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		r, err := os.Open(f)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return "", err
		}
		h.Write([]byte{0})
	}
	fmt.Fprintf(h, "%s/%s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// prune removes the builds of other source states made more than a day ago: a newer one may
// belong to another checkout whose tests are running now.
func prune(cache, keep string) {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == keep {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > 24*time.Hour {
			os.RemoveAll(filepath.Join(cache, e.Name()))
		}
	}
}

// For is Path for one test that drives the binary: a real-process test, skipped by -short (see
// lane), failed when the binary does not build.
func For(t testing.TB) string {
	t.Helper()
	lane.Long(t)
	bin, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
