package sandbox

import (
	"fmt"
	"strings"
)

// Limits bound the work one command may do. A zero field takes its default (the Default*
// constants, listed in docs/tools.md). How each is enforced depends on the system and the
// mode; see limits_linux.go.
type Limits struct {
	// MemoryMB is the memory of the whole command (a cgroup), else of each of its processes
	// (RLIMIT_DATA).
	MemoryMB int `json:"memory_mb,omitempty"`
	// Processes counts the command's processes and threads together.
	Processes int `json:"processes,omitempty"`
	// CPUSeconds is the CPU time of each process (RLIMIT_CPU).
	CPUSeconds int `json:"cpu_seconds,omitempty"`
	// FileSizeMB is the largest file a process may write or extend (RLIMIT_FSIZE).
	FileSizeMB int `json:"file_size_mb,omitempty"`
}

// The default limits: generous for builds and test suites, small against a fork bomb, a memory
// hog or `truncate -s 1T`.
const (
	DefaultMemoryMB   = 4096
	DefaultProcesses  = 1024
	DefaultCPUSeconds = 600
	DefaultFileSizeMB = 4096
)

// WithDefaults fills the zero fields with the defaults.
func (l Limits) WithDefaults() Limits {
	for _, f := range []struct {
		v   *int
		def int
	}{{&l.MemoryMB, DefaultMemoryMB}, {&l.Processes, DefaultProcesses}, {&l.CPUSeconds, DefaultCPUSeconds}, {&l.FileSizeMB, DefaultFileSizeMB}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return l
}

// LimitNames are the names of Limits' fields as the config writes them (command_limits).
var LimitNames = []string{"memory_mb", "processes", "cpu_seconds", "file_size_mb"}

// Validate refuses negative values (0 means the default).
func (l Limits) Validate() error {
	for i, v := range []int{l.MemoryMB, l.Processes, l.CPUSeconds, l.FileSizeMB} {
		if v < 0 {
			return fmt.Errorf("%s: must be positive (got %d; 0 or absent: the default)", LimitNames[i], v)
		}
	}
	return nil
}

// limitHit is a limit a command ran into.
type limitHit struct {
	what   string // "memory", "process", "CPU time", "file size"
	value  string // "256 MiB"
	killed bool   // the kernel killed a process of the command for it
	detail string // what was refused, when nothing was killed
}

func (h limitHit) String() string {
	s := h.what + " limit " + h.value
	if h.killed {
		return "killed: " + s
	}
	return s + " reached: " + h.detail
}

// limitMessage is Result.Limit for the hits ("" for none).
func limitMessage(hits []limitHit) string {
	var s []string
	for _, h := range hits {
		s = append(s, h.String())
	}
	return strings.Join(s, "; ")
}
