package ask

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/massgen-go/massgen/configs"
)

// byteReader returns one byte per Read, so each huh accessible field (which opens its own
// bufio.Scanner on the reader) consumes exactly its own line.
type byteReader struct{ r io.Reader }

func (o byteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestAskContextPaths(t *testing.T) {
	cwd := t.TempDir()
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "config.yaml"), []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(cwd, "golden"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		input   string
		want    []configs.ContextPath
		wantOut []string // substrings of what the user saw
		wantErr error
	}{
		{
			name:    "enter accepts the default: current directory, write",
			input:   "\n",
			want:    []configs.ContextPath{{Path: cwd, Permission: "write"}},
			wantOut: []string{"Add current directory as context path?", cwd, "No context paths configured"},
		},
		{
			name:  "explicit yes",
			input: "1\n",
			want:  []configs.ContextPath{{Path: cwd, Permission: "write"}},
		},
		{
			name:  "no",
			input: "3\n",
			want:  nil,
		},
		{
			name:    "protected: paths one per line, empty line ends",
			input:   "2\ngolden/\nconfig.yaml\n\n",
			want:    []configs.ContextPath{{Path: cwd, Permission: "write", ProtectedPaths: []string{"golden/", "config.yaml"}}},
			wantOut: []string{"Protected paths (relative to " + cwd},
		},
		{
			name:    "protected: a path outside the context path is refused and re-asked",
			input:   "2\n../escape\ngolden\n\n",
			want:    []configs.ContextPath{{Path: cwd, Permission: "write", ProtectedPaths: []string{"golden"}}},
			wantOut: []string{"../escape is not inside"},
		},
		{
			name:    "custom relative file, read, no protected question",
			input:   "4\nconfig.yaml\n2\n",
			want:    []configs.ContextPath{{Path: filepath.Join(cwd, "config.yaml"), Permission: "read"}},
			wantOut: []string{"Path (absolute or relative, file or directory):"},
		},
		{
			name:  "custom absolute dir, default write, then protected paths",
			input: "4\n" + other + "\n\nsecret\n\n",
			want:  []configs.ContextPath{{Path: other, Permission: "write", ProtectedPaths: []string{"secret"}}},
		},
		{
			name:    "custom path that does not exist is re-asked",
			input:   "4\nnope/missing\nconfig.yaml\n1\n\n",
			want:    []configs.ContextPath{{Path: filepath.Join(cwd, "config.yaml"), Permission: "write"}},
			wantOut: []string{filepath.Join(cwd, "nope/missing") + " does not exist"},
		},
		{
			name:    "end of input cancels",
			input:   "4\n",
			wantErr: ErrAborted,
		},
		{
			name:    "nothing at all cancels",
			input:   "",
			wantErr: ErrAborted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := AskContextPaths(context.Background(), ContextPathOptions{
				In: byteReader{strings.NewReader(tt.input)}, Out: &out, Accessible: true, Cwd: cwd,
			})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v\noutput:\n%s", err, tt.wantErr, out.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("AskContextPaths: %v\noutput:\n%s", err, out.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v\noutput:\n%s", got, tt.want, out.String())
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
}

func TestAskContextPathsShowsExisting(t *testing.T) {
	cwd := t.TempDir()
	var out bytes.Buffer
	existing := []configs.ContextPath{{Path: "/srv/docs", Permission: "read", ProtectedPaths: []string{"/srv/docs/keep"}}}
	_, err := AskContextPaths(context.Background(), ContextPathOptions{
		In: byteReader{strings.NewReader("3\n")}, Out: &out, Accessible: true, Cwd: cwd, Existing: existing,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"/srv/docs (read)", "protected: /srv/docs/keep"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
}

func TestAskContextPathsCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := AskContextPaths(ctx, ContextPathOptions{In: strings.NewReader("\n"), Out: io.Discard, Accessible: true, Cwd: t.TempDir()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
