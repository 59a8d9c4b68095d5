package configs

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/massgen-go/massgen/internal/vocab"
)

// Resolve returns the config a run works with: loaded with the context paths the run adds
// (--context flags, a resumed session, --yes, the prompt or /context), each resolved against
// baseDir (protected paths against their context path) with write access by default; a path
// already listed is replaced. The result is a new value that shares nothing writable with
// loaded, which Resolve never changes: a config is finished before anyone reads it, and the
// next turn's context paths make a new one.
func Resolve(loaded *Config, baseDir string, extra ...ContextPath) (*Config, error) {
	out := deepCopy(loaded)
	for _, cp := range extra {
		if strings.TrimSpace(cp.Path) == "" {
			return nil, errors.New("context path: empty path")
		}
		if cp.Permission == "" {
			cp.Permission = vocab.AccessWrite
		}
		r, err := resolveContextPath(cp, baseDir, out.home)
		if err != nil {
			return nil, fmt.Errorf("context path %s: %w", cp.Path, err)
		}
		replaced := false
		for i := range out.Orchestrator.ContextPaths {
			if out.Orchestrator.ContextPaths[i].Path == r.Path {
				out.Orchestrator.ContextPaths[i], replaced = r, true
			}
		}
		if !replaced {
			out.Orchestrator.ContextPaths = append(out.Orchestrator.ContextPaths, r)
		}
	}
	return out, nil
}

// deepCopy copies c so that no slice, map or pointer of the copy is one of c's: writing into
// the copy, or appending to its slices, cannot change c. Functions are shared (they hold no
// config data), as are unexported fields of other packages' types (a struct is copied whole,
// then its exported fields deeply).
func deepCopy(c *Config) *Config {
	if c == nil {
		return nil
	}
	out := deepValue(reflect.ValueOf(c).Elem()).Interface().(Config)
	// Config's own unexported fields, which reflection cannot set.
	out.raw = cloneSlice(c.raw)
	out.prices = cloneMap(c.prices)
	out.lines = cloneMap(c.lines)
	out.sharedCWD = cloneMap(c.sharedCWD)
	out.mappedPerms = cloneMap(c.mappedPerms)
	return &out
}

func cloneSlice[S ~[]E, E any](s S) S {
	if s == nil {
		return nil
	}
	return append(S(nil), s...)
}

func cloneMap[M ~map[K]V, K comparable, V any](m M) M {
	if m == nil {
		return nil
	}
	out := make(M, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// deepValue returns a deep copy of v (see deepCopy), addressable so that callers can set it.
func deepValue(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(deepValue(v.Elem()))
			out.Set(p)
		}
	case reflect.Slice:
		if !v.IsNil() {
			s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			for i := range v.Len() {
				s.Index(i).Set(deepValue(v.Index(i)))
			}
			out.Set(s)
		}
	case reflect.Array:
		for i := range v.Len() {
			out.Index(i).Set(deepValue(v.Index(i)))
		}
	case reflect.Map:
		if !v.IsNil() {
			m := reflect.MakeMapWithSize(v.Type(), v.Len())
			for it := v.MapRange(); it.Next(); {
				m.SetMapIndex(it.Key(), deepValue(it.Value()))
			}
			out.Set(m)
		}
	case reflect.Interface:
		if !v.IsNil() {
			out.Set(deepValue(v.Elem()))
		}
	case reflect.Struct:
		out.Set(v) // unexported fields as they are
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(deepValue(v.Field(i)))
			}
		}
	default:
		out.Set(v)
	}
	return out
}
