// Package lane sorts tests into the two lanes of the suite: `make test-short` (go test -short),
// the loop a developer runs every few minutes, and `make test`, what CI runs. Long tests (swap
// loops racing a tool thousands of times, suites of real processes, every shared MassGen config)
// run only in the second.
package lane

import "testing"

// Long skips t in -short mode. Call it first in a test whose value lies in its length or its
// real processes.
func Long(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("long test (swap loop or real processes): run by make test, skipped by -short")
	}
}
