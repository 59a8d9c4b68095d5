package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/internal/testing/fakeprovider"
	"github.com/massgen-go/massgen/internal/testing/testbin"
)

// paramConfig is a one-agent openai config against the fake provider, with the given option
// lines under backend:.
func paramConfig(srv *fakeprovider.Server, options string) string {
	return fmt.Sprintf("agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-5\n      base_url: %s\n%s", srv.BaseURL("openai"), options)
}

// runBin runs the built massgen in dir with a fake key; it returns stdout, stderr and the exit
// code.
func runBin(t *testing.T, bin, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "OPENAI_API_KEY=test-key", "NO_COLOR=1")
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// An option value of the wrong type (temperature: hot, max_tokens: lots) is an error of
// `configs validate` and of the start of a run, naming file:line, key, value and what was
// expected, with the exit code of every config error (2); the provider is never called.
func TestBinaryRefusesWrongOptionValues(t *testing.T) {
	bin := testbin.For(t)
	srv := fakeprovider.New(fakeprovider.Agreeable())
	defer srv.Close()
	dir := t.TempDir()
	cfg := paramConfig(srv, "      temperature: hot\n      max_tokens: lots\n")
	if err := os.WriteFile(filepath.Join(dir, "x.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`x.yaml:7: agents[0].backend.temperature: "hot" is not a number (expected a number from 0 to 2)`,
		`x.yaml:8: agents[0].backend.max_tokens: "lots" is not a whole number (expected a whole number, at least 1)`,
	}
	for _, args := range [][]string{
		{"configs", "validate", "x.yaml"},
		{"--config", "x.yaml", "--yes", "--display", "plain", "Say hello"},
	} {
		stdout, stderr, code := runBin(t, bin, dir, args...)
		if code != 2 {
			t.Errorf("massgen %s: exit %d, want 2\nstdout %s\nstderr %s", strings.Join(args, " "), code, stdout, stderr)
		}
		for _, w := range want {
			if !strings.Contains(stderr, w) {
				t.Errorf("massgen %s: stderr lacks %q:\n%s", strings.Join(args, " "), w, stderr)
			}
		}
	}
	if n := srv.Count(); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
}

// A valid value reaches the provider as the number it stands for, even written as a string.
func TestBinarySendsOptionValuesTyped(t *testing.T) {
	bin := testbin.For(t)
	srv := fakeprovider.New(fakeprovider.Agreeable())
	defer srv.Close()
	dir := t.TempDir()
	cfg := paramConfig(srv, "      temperature: \"0.5\"\n      max_tokens: 900\n")
	if err := os.WriteFile(filepath.Join(dir, "x.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, code := runBin(t, bin, dir, "--config", "x.yaml", "--yes", "--display", "plain", "Say hello"); code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the provider")
	}
	for i, r := range reqs {
		var body struct {
			Temperature any `json:"temperature"`
			MaxOutput   any `json:"max_output_tokens"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.Temperature != 0.5 || body.MaxOutput != 900.0 {
			t.Errorf("request %d: temperature %#v, max_output_tokens %#v; want the numbers 0.5 and 900", i, body.Temperature, body.MaxOutput)
		}
	}
}
