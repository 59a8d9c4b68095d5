package cmdutil

import (
	"bytes"
	"log"
	"testing"
)

func TestSDKLogDropsOnlyTheGeminiKeyLine(t *testing.T) {
	var buf bytes.Buffer
	l := log.New(SDKLog{W: &buf}, "", 0)
	l.Printf("Warning: Both GOOGLE_API_KEY and GEMINI_API_KEY are set. Using GOOGLE_API_KEY.")
	l.Printf("Warning: something else")
	if got := buf.String(); got != "Warning: something else\n" {
		t.Errorf("written %q", got)
	}
}
