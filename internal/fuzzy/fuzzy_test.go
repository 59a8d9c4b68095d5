package fuzzy

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"model", "model", 0}, {"modle", "model", 1}, {"temprature", "temperature", 1},
		{"", "abc", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"ui", "id", 2},
		{"versoin", "version", 1}, {"helpp", "help", 1}, {"sesions", "sessions", 1}, {"hello", "help", 2},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
