package sandbox

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestLimitsDocumented: docs/tools.md states the defaults massgen uses.
func TestLimitsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for i, v := range []int{DefaultMemoryMB, DefaultProcesses, DefaultCPUSeconds, DefaultFileSizeMB} {
		if row := fmt.Sprintf("| `%s` | %d |", LimitNames[i], v); !strings.Contains(doc, row) {
			t.Errorf("docs/tools.md has no row %q", row)
		}
	}
}

// TestLimitsDefaultsAndValidation: zero fields take the defaults; negative ones are refused.
func TestLimitsDefaultsAndValidation(t *testing.T) {
	got := Limits{Processes: 7}.WithDefaults()
	if want := (Limits{DefaultMemoryMB, 7, DefaultCPUSeconds, DefaultFileSizeMB}); got != want {
		t.Errorf("WithDefaults = %+v, want %+v", got, want)
	}
	if err := (Limits{CPUSeconds: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "cpu_seconds") {
		t.Errorf("Validate(-1 s) = %v", err)
	}
}
