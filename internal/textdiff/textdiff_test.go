package textdiff

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// applyUnified applies a unified diff produced by Unified to a (test helper: hunks in order).
func applyUnified(t *testing.T, a, diff string) string {
	t.Helper()
	if diff == "" {
		return a
	}
	src := SplitLines(a)
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	pos := 0
	last := byte(0)
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "@@") {
			f := strings.Fields(l)[1] // -start[,n]
			start, _ := strconv.Atoi(strings.Split(strings.TrimPrefix(f, "-"), ",")[0])
			n := 1
			if p := strings.Split(f, ","); len(p) == 2 {
				n, _ = strconv.Atoi(p[1])
			}
			if n == 0 {
				start++ // an empty range names the line before
			}
			for pos < start-1 {
				out = append(out, src[pos])
				pos++
			}
			continue
		}
		if strings.HasPrefix(l, `\ No newline`) {
			if last != '-' { // the marker applies to the line just before it
				out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
			}
			continue
		}
		last = l[0]
		body := l[1:]
		switch l[0] {
		case ' ':
			out = append(out, body)
			pos++
		case '-':
			pos++
		case '+':
			out = append(out, body)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, "")
}

func TestUnifiedDiff(t *testing.T) {
	tests := []struct{ a, b string }{
		{"", ""}, {"a\n", "a\n"}, {"", "x\n"}, {"x\n", ""}, {"a\nb\nc\n", "a\nc\n"},
		{"a\nb", "a\nb\n"}, {"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "0\n1\n2\n3\n4\nfive\n6\n7\n8\n9\nten\n"},
	}
	for _, tt := range tests {
		d, added, removed := Unified("a", "b", tt.a, tt.b, 2)
		if got := applyUnified(t, tt.a, d); got != tt.b {
			t.Errorf("diff of %q -> %q does not apply: got %q\n%s", tt.a, tt.b, got, d)
		}
		if (tt.a == tt.b) != (d == "" && added == 0 && removed == 0) {
			t.Errorf("%q vs %q: identical inputs must give an empty diff: %q", tt.a, tt.b, d)
		}
	}
}

// FuzzUnifiedDiff: the diff of any two texts applies back to the second, and its counts match.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nx\nc\n", 3)
	f.Add("", "new\n", 0)
	f.Add("no newline", "no newline\n", 1)
	f.Fuzz(func(t *testing.T, a, b string, ctx int) {
		if len(a) > 2000 || len(b) > 2000 {
			return
		}
		ctx = ctx % 5
		if ctx < 0 {
			ctx = -ctx
		}
		d, added, removed := Unified("a", "b", a, b, ctx)
		if got := applyUnified(t, a, d); got != b {
			t.Fatalf("does not apply: %q -> %q gave %q\n%s", a, b, got, d)
		}
		plus, minus := 0, 0
		for _, l := range strings.SplitAfter(d, "\n")[min(2, len(strings.SplitAfter(d, "\n"))):] {
			if strings.HasPrefix(l, "+") {
				plus++
			} else if strings.HasPrefix(l, "-") {
				minus++
			}
		}
		if plus != added || minus != removed {
			t.Fatalf("counts %d/%d, diff has %d/%d", added, removed, plus, minus)
		}
	})
}

// TestUnifiedDiffLargeInputsStayBounded: two large unrelated texts must not make the diff
// quadratic in memory (it used to keep a full copy of Myers' V array per edit: gigabytes for
// files of a few thousand lines). Past the edit limit the middle is replaced whole; the diff still
// applies and its counts are right.
func TestUnifiedDiffLargeInputsStayBounded(t *testing.T) {
	lines := func(prefix string, n int) string {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "%s %d\n", prefix, i)
		}
		return sb.String()
	}
	tests := []struct {
		name         string
		a, b         string
		wantAdded    int
		wantRemoved  int
		wantMaxLines int // upper bound on the diff's length in lines
	}{
		{"unrelated, past the edit limit", lines("old", 30_000), lines("new", 30_000), 30_000, 30_000, 60_010},
		{"one change in a long file", lines("same", 50_000), strings.Replace(lines("same", 50_000), "same 25000\n", "changed\n", 1), 1, 1, 12},
		{"unrelated middle within a shared frame", "head\n" + lines("x", 1500) + "tail\n", "head\n" + lines("y", 1500) + "tail\n", 1500, 1500, 3010},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, added, removed := Unified("a", "b", tc.a, tc.b, 3)
			if added != tc.wantAdded || removed != tc.wantRemoved {
				t.Fatalf("added/removed = %d/%d, want %d/%d", added, removed, tc.wantAdded, tc.wantRemoved)
			}
			if n := strings.Count(d, "\n"); n > tc.wantMaxLines {
				t.Fatalf("diff has %d lines, want at most %d", n, tc.wantMaxLines)
			}
			if got := applyUnified(t, tc.a, d); got != tc.b {
				t.Fatal("diff does not apply")
			}
		})
	}
}

func BenchmarkUnifiedDiffUnrelated(b *testing.B) {
	var x, y strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&x, "old %d\n", i)
		fmt.Fprintf(&y, "new %d\n", i)
	}
	for b.Loop() {
		Unified("a", "b", x.String(), y.String(), 3)
	}
}
