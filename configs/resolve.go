package configs

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/massgen-go/massgen/internal/vocab"
)

// Inputs are what a run adds to a loaded config: each comes from a flag, a resumed session,
// --yes, the prompt or /context, never from writing into the loaded config.
type Inputs struct {
	// BaseDir is what relative context paths resolve against (the current directory).
	BaseDir string
	// ContextPaths are added with write access by default; a path already listed is replaced.
	ContextPaths []ContextPath
	// MaxCostUSD, when above 0, replaces orchestrator.max_cost_usd (--max-cost).
	MaxCostUSD float64
}

// Resolve returns the config a run works with: loaded with in's context paths, each resolved
// against in.BaseDir (protected paths against their context path), and in's overrides. The
// result is a new value that shares nothing writable with loaded, which Resolve never changes:
// a config is finished before anyone reads it, and the next turn's context paths make a new one.
func Resolve(loaded *Config, in Inputs) (*Config, error) {
	out := deepCopy(loaded)
	for _, cp := range in.ContextPaths {
		if strings.TrimSpace(cp.Path) == "" {
			return nil, errors.New("context path: empty path")
		}
		if cp.Permission == "" {
			cp.Permission = vocab.AccessWrite
		}
		r, err := resolveContextPath(cp, in.BaseDir, out.home)
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
	switch {
	case in.MaxCostUSD < 0 || math.IsNaN(in.MaxCostUSD) || math.IsInf(in.MaxCostUSD, 0):
		return nil, fmt.Errorf("max cost %v: want a budget in USD greater than 0", in.MaxCostUSD)
	case in.MaxCostUSD > 0:
		out.Orchestrator.MaxCostUSD = in.MaxCostUSD
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
