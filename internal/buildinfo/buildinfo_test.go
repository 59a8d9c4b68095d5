package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name     string
		bi       debug.BuildInfo
		override string
		want     string
	}{
		{"release with commit", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "8f2c1e0d"}, {Key: "vcs.time", Value: "2025-10-01T12:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			"", "massgen v0.3.0\ncommit 8f2c1e0d, 2025-10-01T12:00:00Z\ngo1.26.0 " + platform + "\n"},
		{"local build with changes", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			"", "massgen (devel)\ncommit abc (modified)\ngo1.26.0 " + platform + "\n"},
		{"no version control", debug.BuildInfo{GoVersion: "go1.26.0"},
			"", "massgen (devel)\ncommit unknown (built without version control information)\ngo1.26.0 " + platform + "\n"},
		{"ldflags override wins", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			"v1.2.3", "massgen v1.2.3\ncommit unknown (built without version control information)\ngo1.26.0 " + platform + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FromBuildInfo(&tt.bi, tt.override).String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
