package app

import (
	"strings"
	"testing"
)

func TestQuickConfigGuessesTheBackend(t *testing.T) {
	for model, backend := range map[string]string{"gpt-5": "openai", "o3-mini": "openai", "claude-sonnet-4-5": "claude", "gemini-2.5-pro": "gemini", "grok-4": "grok", "glm-4.5": "zai"} {
		name, data, err := quickConfig(QuickOptions{Model: model}, "")
		if err != nil || !strings.Contains(string(data), "type: "+backend) || name != "quick mode (--backend "+backend+" --model "+model+")" {
			t.Errorf("%s: %s %s %v, want backend %s", model, name, data, err, backend)
		}
	}
}
