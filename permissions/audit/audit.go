// Package audit appends permission decisions to a run's audit log, permissions.jsonl: one JSON
// object per line, written whole under a lock so concurrent agents never interleave lines.
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Entry is one line of permissions.jsonl.
type Entry struct {
	Time     time.Time `json:"time"`
	Agent    string    `json:"agent"`
	Role     string    `json:"role"`
	Tool     string    `json:"tool"`
	Paths    []string  `json:"paths"`
	Decision string    `json:"decision"`
	Rule     string    `json:"rule"`
	Reason   string    `json:"reason,omitempty"`
}

// Log is an open audit file. Safe for concurrent use; a nil *Log records nothing.
type Log struct {
	mu sync.Mutex
	f  *os.File
}

// Open opens (creating or appending to) the audit file, readable by its owner only.
func Open(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: opening %s: %w", path, err)
	}
	return &Log{f: f}, nil
}

// Write appends one entry.
func (l *Log) Write(e Entry) error {
	if l == nil {
		return nil
	}
	if e.Paths == nil {
		e.Paths = []string{}
	}
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	data = append(data, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("audit: log closed")
	}
	if _, err := l.f.Write(data); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Close closes the file; later writes fail.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
