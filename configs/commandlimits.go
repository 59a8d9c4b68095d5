package configs

import "fmt"

// CommandLimits is `command_limits:` (top level: every agent; agents[].command_limits: one
// agent, field by field over the top level). They bound each execute_command and custom tool
// process; 0 or absent: massgen's default (docs/tools.md).
type CommandLimits struct {
	MemoryMB   int `yaml:"memory_mb,omitempty" json:"memory_mb,omitempty"`
	Processes  int `yaml:"processes,omitempty" json:"processes,omitempty"`
	CPUSeconds int `yaml:"cpu_seconds,omitempty" json:"cpu_seconds,omitempty"`
	FileSizeMB int `yaml:"file_size_mb,omitempty" json:"file_size_mb,omitempty"`
}

// commandLimitFields are the keys with their largest values: beyond them a limit means
// nothing any more (or would overflow once in bytes).
func (l *CommandLimits) fields() []struct {
	key string
	v   int
	max int
} {
	return []struct {
		key string
		v   int
		max int
	}{{"memory_mb", l.MemoryMB, 1 << 30}, {"processes", l.Processes, 1 << 22}, {"cpu_seconds", l.CPUSeconds, 1 << 31}, {"file_size_mb", l.FileSizeMB, 1 << 30}}
}

// CommandLimitsOf are the limits of agent id's commands: its own over the top level's.
func (c *Config) CommandLimitsOf(id string) CommandLimits {
	var out CommandLimits
	if c.CommandLimits != nil {
		out = *c.CommandLimits
	}
	for _, a := range c.Agents {
		if a.ID != id || a.CommandLimits == nil {
			continue
		}
		for _, f := range []struct{ dst, src *int }{{&out.MemoryMB, &a.CommandLimits.MemoryMB}, {&out.Processes, &a.CommandLimits.Processes},
			{&out.CPUSeconds, &a.CommandLimits.CPUSeconds}, {&out.FileSizeMB, &a.CommandLimits.FileSizeMB}} {
			if *f.src != 0 {
				*f.dst = *f.src
			}
		}
	}
	return out
}

// validateCommandLimits checks one command_limits block at path.
func validateCommandLimits(d *document, path string, l *CommandLimits) []Problem {
	if l == nil {
		return nil
	}
	var probs []Problem
	for _, f := range l.fields() {
		p := path + "." + f.key
		msg := ""
		switch {
		case f.v < 0:
			msg = fmt.Sprintf("must be positive (got %d; 0 or absent: the default)", f.v)
		case f.v > f.max:
			msg = fmt.Sprintf("%d is too large (at most %d)", f.v, f.max)
		}
		if msg != "" {
			probs = append(probs, Problem{File: d.file, Line: d.lineOf(p), Key: p, Message: p + ": " + msg})
		}
	}
	return probs
}
