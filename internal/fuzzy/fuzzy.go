// Package fuzzy measures how far apart two words are, for "did you mean" messages (config keys,
// command names).
package fuzzy

// Distance is the optimal-string-alignment distance: insertions, deletions, substitutions
// and swaps of two neighbouring letters ("modle" -> "model" is one) each cost one.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] = distance between ra[:i] and rb[:j]; three rows suffice.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
