// Package textdiff diffs text: unified diffs (Myers, bounded), line splitting and the sniff that
// tells text from binary content. The file tools (edit_file, compare_files, previews) and the
// change record (massgen diff) share it.
package textdiff

import (
	"bytes"
	"fmt"
	"strings"
)

// SplitLines splits text into lines keeping their "\n" so a missing final newline is visible.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type opKind byte

const (
	opEqual opKind = ' '
	opDel   opKind = '-'
	opIns   opKind = '+'
)

type diffOp struct {
	kind opKind
	a, b int // line index in a (equal/del) and b (equal/ins)
}

// diffBudget bounds the work (and, through maxDiffEdits, the memory) of one diff: a model can ask
// for the diff of two large, unrelated files, and Myers' algorithm is O((N+M)·D) in time and, as
// written here, O(D²) in memory. Past either limit the changed middle is reported as deleted and
// re-added whole: still a correct diff, just not a minimal one.
const (
	diffBudget   = 20_000_000
	maxDiffEdits = 2000
)

// myers computes an edit script between a and b: the common prefix and suffix are matched first,
// then Myers' O(ND) algorithm finds a shortest script for the rest within diffBudget.
func myers(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, ok := myersCore(ma, mb)
	if !ok {
		mid = replaceAll(len(ma), len(mb))
	}
	ops := make([]diffOp, 0, pre+len(mid)+suf)
	for i := range pre {
		ops = append(ops, diffOp{opEqual, i, i})
	}
	for _, o := range mid {
		ops = append(ops, diffOp{o.kind, o.a + pre, o.b + pre})
	}
	for i := range suf {
		ops = append(ops, diffOp{opEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return ops
}

// replaceAll is the script that deletes all n lines of a and inserts all m lines of b.
func replaceAll(n, m int) []diffOp {
	ops := make([]diffOp, 0, n+m)
	for i := range n {
		ops = append(ops, diffOp{opDel, i, 0})
	}
	for j := range m {
		ops = append(ops, diffOp{opIns, n, j})
	}
	return ops
}

// vSnap is the part of Myers' V array that round d's backtracking reads: indices lo..lo+len-1.
type vSnap struct {
	lo   int
	vals []int
}

func (s vSnap) at(i int) int { return s.vals[i-s.lo] }

// myersCore is Myers' algorithm; ok is false when the script would exceed maxDiffEdits or the
// work diffBudget.
func myersCore(a, b []string) (ops []diffOp, ok bool) {
	n, m := len(a), len(b)
	total := n + m
	if total == 0 {
		return nil, true
	}
	off := total
	v := make([]int, 2*total+2)
	var trace []vSnap
	work := 0
	for d := 0; d <= total && d <= maxDiffEdits; d++ {
		lo, hi := max(off-d-1, 0), min(off+d+1, len(v)-1)
		trace = append(trace, vSnap{lo, append([]int(nil), v[lo:hi+1]...)})
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
				work++
			}
			work++
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, d, off), true
			}
		}
		if work > diffBudget {
			return nil, false
		}
	}
	return nil, false
}

func backtrack(trace []vSnap, a, b []string, d, off int) []diffOp {
	x, y := len(a), len(b)
	var ops []diffOp
	for ; d > 0; d-- {
		v := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && v.at(off+k-1) < v.at(off+k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v.at(off + pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			ops = append(ops, diffOp{opEqual, x, y})
		}
		if x == px {
			y--
			ops = append(ops, diffOp{opIns, x, y})
		} else {
			x--
			ops = append(ops, diffOp{opDel, x, y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		ops = append(ops, diffOp{opEqual, x, y})
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}

// Unified returns a unified diff of a and b with ctx lines of context, and the numbers of
// added and removed lines. Identical inputs give "".
func Unified(nameA, nameB, a, b string, ctx int) (diff string, added, removed int) {
	if ctx < 0 {
		ctx = 0
	}
	la, lb := SplitLines(a), SplitLines(b)
	ops := myers(la, lb)
	for _, o := range ops {
		switch o.kind {
		case opIns:
			added++
		case opDel:
			removed++
		}
	}
	if added == 0 && removed == 0 {
		return "", 0, 0
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", nameA, nameB)
	line := func(prefix opKind, s string) {
		sb.WriteByte(byte(prefix))
		sb.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
	for i := 0; i < len(ops); {
		// Find the next change.
		for i < len(ops) && ops[i].kind == opEqual {
			i++
		}
		if i == len(ops) {
			break
		}
		start := i - ctx
		if start < 0 {
			start = 0
		}
		// Extend the hunk while changes are within 2*ctx of each other.
		end := i
		for end < len(ops) {
			if ops[end].kind != opEqual {
				end++
				continue
			}
			j := end
			for j < len(ops) && ops[j].kind == opEqual {
				j++
			}
			if j == len(ops) || j-end > 2*ctx {
				end += min(ctx, j-end)
				break
			}
			end = j
		}
		// Hunk header: positions are 1-based; an empty range starts at the line before.
		aStart, bStart, aLen, bLen := -1, -1, 0, 0
		for _, o := range ops[start:end] {
			if o.kind != opIns {
				if aStart < 0 {
					aStart = o.a
				}
				aLen++
			}
			if o.kind != opDel {
				if bStart < 0 {
					bStart = o.b
				}
				bLen++
			}
		}
		if aStart < 0 {
			aStart = ops[start].a - 1
		}
		if bStart < 0 {
			bStart = ops[start].b - 1
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range ops[start:end] {
			switch o.kind {
			case opEqual:
				line(opEqual, la[o.a])
			case opDel:
				line(opDel, la[o.a])
			case opIns:
				line(opIns, lb[o.b])
			}
		}
		i = end
	}
	return sb.String(), added, removed
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	if n == 0 {
		return fmt.Sprintf("%d,0", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// MaxBytes is the largest file that is diffed (larger ones are named, not diffed).
const MaxBytes = 5 << 20

// SniffLen is how much of a file is inspected for NUL bytes.
const SniffLen = 8000

// Binary reports whether content starting with head is binary: a NUL byte in its first 8000
// bytes (git's rule).
func Binary(head []byte) bool {
	if len(head) > SniffLen {
		head = head[:SniffLen]
	}
	return bytes.IndexByte(head, 0) >= 0
}
