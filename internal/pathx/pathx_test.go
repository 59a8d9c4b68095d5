package pathx

import "testing"

func TestWithin(t *testing.T) {
	tests := []struct {
		p, root string
		want    bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"/x", "/", true},
		{"/", "/", true},
		{"/a/b", "/a/b/", false},
	}
	for _, tt := range tests {
		if got := Within(tt.p, tt.root); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.p, tt.root, got, tt.want)
		}
	}
	if !WithinAny("/a/b", []string{"/x", "/a"}) || WithinAny("/a/b", nil) {
		t.Error("WithinAny")
	}
}
