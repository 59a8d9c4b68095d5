// Package trust records which rule files the user approved. A file massgen loads permission rules
// or hooks from (.massgen/permissions.yaml, a config file that defines hooks) could have been
// written by an agent; it takes effect only when its content is the one the user approved. An
// approval is the SHA-256 of the file's content and of every program and script its hooks run,
// kept in a store outside every path an agent can reach ($XDG_CONFIG_HOME/massgen/trust.json,
// default ~/.config/massgen/trust.json).
package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/runlock"
)

// FileName is the store's file name inside its directory.
const FileName = "trust.json"

// Command is how the user approves a file (messages name it).
const Command = "massgen permissions trust"

// Store is the file approvals are kept in.
type Store struct {
	path string
}

// New returns the store at path (absolute).
func New(path string) Store { return Store{path: filepath.Clean(path)} }

// DefaultPath is $XDG_CONFIG_HOME/massgen/trust.json when XDG_CONFIG_HOME is absolute, else
// <home>/.config/massgen/trust.json: in configs.UserConfigDir, beside the user's config.yaml and
// .env.
func DefaultPath(lookupEnv func(string) (string, bool), home string) (string, error) {
	dir := configs.UserConfigDir(lookupEnv, home)
	if dir == "" {
		return "", errors.New("trust: no home directory and no XDG_CONFIG_HOME: nowhere to keep approvals")
	}
	return filepath.Join(dir, FileName), nil
}

// Default is the store of the user running massgen (from the process environment).
func Default() (Store, error) {
	home, _ := os.UserHomeDir()
	p, err := DefaultPath(os.LookupEnv, home)
	if err != nil {
		return Store{}, err
	}
	return New(p), nil
}

// Path is the store's file.
func (s Store) Path() string { return s.path }

// Dir is the store's directory: no agent may read or write anything in it.
func (s Store) Dir() string { return filepath.Dir(s.path) }

// Sum is the approval of content.
func Sum(content []byte) string {
	h := sha256.Sum256(content)
	return hex.EncodeToString(h[:])
}

// UntrustedError is a file that is new or changed since the user approved it, or whose hooks'
// programs and scripts changed (the approval is stale).
type UntrustedError struct {
	File    string // absolute path
	What    string // what the file can do, e.g. "sets permission rules and hooks"
	Changed bool   // an earlier content was approved
	Store   string // the store consulted
	// Stale are the programs and scripts its hooks run that changed since the approval, or
	// that it did not cover (the file itself is unchanged).
	Stale []string
}

func (e *UntrustedError) Error() string {
	if len(e.Stale) > 0 {
		return fmt.Sprintf("%s was not loaded: its approval is stale. Its hooks run %s, which changed since you approved it (or which the approval did not cover), and any program that can write there could have changed it. "+
			"Review it, then approve it again with: %s %s", e.File, strings.Join(e.Stale, ", "), Command, e.File)
	}
	state := "is new"
	if e.Changed {
		state = "changed since you approved it"
	}
	return fmt.Sprintf("%s %s and was not loaded: it %s, and any program that can write there (an agent, too) could have written it. "+
		"Review it, then approve it with: %s %s", e.File, state, e.What, Command, e.File)
}

type record struct {
	SHA256   string    `json:"sha256"`
	Approved time.Time `json:"approved"`
	// Programs are the SHA-256 of the programs and scripts the file's hooks run, by path
	// (symlinks resolved).
	Programs map[string]string `json:"programs,omitempty"`
}

type storeFile struct {
	Version int               `json:"version"`
	Files   map[string]record `json:"files"`
}

// key is the file's approval key: its absolute path with the directory's symlinks resolved, so
// a project reached through a link is the same project.
func key(file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", fmt.Errorf("trust: %s: %w", file, err)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs)), nil
	}
	return abs, nil
}

func (s Store) load() (storeFile, error) {
	sf := storeFile{Version: 1, Files: map[string]record{}}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return sf, nil
	}
	if err != nil {
		return sf, fmt.Errorf("trust: reading %s: %w", s.path, err)
	}
	if err := json.Unmarshal(data, &sf); err != nil {
		return sf, fmt.Errorf("trust: %s is not a valid approval store (%v); fix or remove it, then approve your files again", s.path, err)
	}
	if sf.Files == nil {
		sf.Files = map[string]record{}
	}
	return sf, nil
}

// lookup is file's approval key and the store's content.
func (s Store) lookup(file string) (string, storeFile, error) {
	if s.path == "" {
		return "", storeFile{}, errors.New("trust: no approval store")
	}
	k, err := key(file)
	if err != nil {
		return "", storeFile{}, err
	}
	sf, err := s.load()
	return k, sf, err
}

// Check returns nil when content is the approved content of file; an *UntrustedError (what says
// what the file can do) when it is not; another error when the store cannot be read.
func (s Store) Check(file string, content []byte, what string) error {
	k, sf, err := s.lookup(file)
	if err != nil {
		return err
	}
	r, ok := sf.Files[k]
	if ok && r.SHA256 == Sum(content) {
		return nil
	}
	return &UntrustedError{File: k, What: what, Changed: ok, Store: s.path}
}

// CheckPrograms returns nil when every program and script in current (path: SHA-256 now) is
// one the approval of file covers with that hash; an *UntrustedError naming the others
// otherwise. file's content must have passed Check.
func (s Store) CheckPrograms(file string, current map[string]string, what string) error {
	approved, err := s.Programs(file)
	if err != nil {
		return err
	}
	var stale []string
	for _, p := range slices.Sorted(maps.Keys(current)) {
		if approved[p] != current[p] {
			stale = append(stale, p)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	k, _ := key(file)
	return &UntrustedError{File: k, What: what, Changed: true, Store: s.path, Stale: stale}
}

// Programs are the programs and scripts the approval of file covers, with their SHA-256 (nil
// when file is not approved).
func (s Store) Programs(file string) (map[string]string, error) {
	k, sf, err := s.lookup(file)
	if err != nil {
		return nil, err
	}
	return sf.Files[k].Programs, nil
}

// Approve records content as the approved content of file, and programs (path: SHA-256) as the
// programs and scripts its hooks run, replacing any earlier approval. The store is read,
// changed and written whole to a temporary file renamed into place (owner-only), all under the
// store's lock (trust.json.lock): approvals made at the same time by several massgen processes
// are all kept.
func (s Store) Approve(file string, content []byte, programs map[string]string, now time.Time) error {
	if s.path == "" {
		return errors.New("trust: no approval store")
	}
	if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	lock, err := runlock.Exclusive(context.Background(), s.path+".lock")
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	defer lock.Unlock()
	k, sf, err := s.lookup(file)
	if err != nil {
		return err
	}
	sf.Version = 1
	sf.Files[k] = record{SHA256: Sum(content), Approved: now.UTC(), Programs: maps.Clone(programs)}
	data, err := json.MarshalIndent(sf, "", "  ")
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	tmp, err := os.CreateTemp(s.Dir(), ".trust-*.json")
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	defer os.Remove(tmp.Name()) // nothing left once renamed
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("trust: writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("trust: writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("trust: writing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	return nil
}
