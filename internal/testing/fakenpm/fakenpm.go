// Package fakenpm is an npm registry for tests: an httptest server that serves, as packuments
// and tarballs, every package installed in a node_modules tree (the npm MCP servers the tests
// use, installed by `make test-deps`). npx pointed at it (npm_config_registry) installs and
// runs the real packages with no network. Like internal/testing/fakeprovider it fakes only what is
// remote; npm, npx and the packages are real.
package fakenpm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Registry serves the packages of one node_modules tree.
type Registry struct {
	srv *httptest.Server
	// pkgs maps a package name to its versions and the folder holding each.
	pkgs map[string]map[string]string

	mu       sync.Mutex
	tarballs map[string][]byte // name@version -> .tgz
}

// New serves every package under nodeModules (nested node_modules included). Close it when
// done.
func New(nodeModules string) (*Registry, error) {
	r := &Registry{pkgs: map[string]map[string]string{}, tarballs: map[string][]byte{}}
	if err := r.scan(nodeModules); err != nil {
		return nil, err
	}
	if len(r.pkgs) == 0 {
		return nil, fmt.Errorf("fakenpm: no packages under %s", nodeModules)
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r, nil
}

// URL is the registry's address (npm_config_registry).
func (r *Registry) URL() string { return r.srv.URL + "/" }

// Close stops the server.
func (r *Registry) Close() { r.srv.Close() }

func (r *Registry) scan(nm string) error {
	ents, err := os.ReadDir(nm)
	if err != nil {
		return fmt.Errorf("fakenpm: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.IsDir() {
			continue
		}
		if strings.HasPrefix(name, "@") {
			sub, err := os.ReadDir(filepath.Join(nm, name))
			if err != nil {
				return err
			}
			for _, s := range sub {
				if s.IsDir() {
					if err := r.add(filepath.Join(nm, name, s.Name())); err != nil {
						return err
					}
				}
			}
			continue
		}
		if err := r.add(filepath.Join(nm, name)); err != nil {
			return err
		}
	}
	return nil
}

func (r *Registry) add(dir string) error {
	var m struct{ Name, Version string }
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil || json.Unmarshal(b, &m) != nil || m.Name == "" || m.Version == "" {
		return nil // not a package
	}
	if r.pkgs[m.Name] == nil {
		r.pkgs[m.Name] = map[string]string{}
	}
	r.pkgs[m.Name][m.Version] = dir
	if nested := filepath.Join(dir, "node_modules"); isDir(nested) {
		return r.scan(nested)
	}
	return nil
}

func isDir(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	p, err := url.PathUnescape(strings.TrimPrefix(req.URL.EscapedPath(), "/"))
	if err != nil {
		http.NotFound(w, req)
		return
	}
	if rest, ok := strings.CutPrefix(p, "-/tarball/"); ok {
		i := strings.LastIndex(rest, "/")
		if i < 0 {
			http.NotFound(w, req)
			return
		}
		tgz, err := r.tarball(rest[:i], strings.TrimSuffix(rest[i+1:], ".tgz"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(tgz)
		return
	}
	versions := r.pkgs[p]
	if versions == nil {
		http.Error(w, `{"error":"Not found"}`, http.StatusNotFound)
		return
	}
	out := map[string]any{"name": p}
	vs := map[string]any{}
	var all []string
	for v, dir := range versions {
		m, err := r.manifest(p, v, dir)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		vs[v] = m
		all = append(all, v)
	}
	sort.Slice(all, func(i, j int) bool { return semverLess(all[i], all[j]) })
	out["versions"] = vs
	out["dist-tags"] = map[string]string{"latest": all[len(all)-1]}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// manifest is the package's package.json as a registry gives it: no lifecycle scripts, with
// dist (tarball address and integrity).
func (r *Registry) manifest(name, version, dir string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k := range m {
		if strings.HasPrefix(k, "_") {
			delete(m, k)
		}
	}
	delete(m, "scripts")
	delete(m, "devDependencies")
	tgz, err := r.tarball(name, version)
	if err != nil {
		return nil, err
	}
	sum := sha512.Sum512(tgz)
	m["dist"] = map[string]any{
		"tarball":   r.srv.URL + "/-/tarball/" + name + "/" + version + ".tgz",
		"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
	}
	return m, nil
}

// tarball packs the package's folder (its own node_modules left out) as package/...
func (r *Registry) tarball(name, version string) ([]byte, error) {
	key := name + "@" + version
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.tarballs[key]; ok {
		return b, nil
	}
	dir := r.pkgs[name][version]
	if dir == "" {
		return nil, fmt.Errorf("no %s", key)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: "package/" + filepath.ToSlash(rel), Mode: int64(fi.Mode().Perm() | 0o644), Size: int64(len(data)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("fakenpm: packing %s: %w", key, err)
	}
	r.tarballs[key] = buf.Bytes()
	return buf.Bytes(), nil
}

// semverLess orders x.y.z versions (prerelease tags after the numbers compare as text).
func semverLess(a, b string) bool {
	pa, pb := strings.SplitN(a, ".", 3), strings.SplitN(b, ".", 3)
	for i := 0; i < 3 && i < len(pa) && i < len(pb); i++ {
		var x, y int
		fmt.Sscanf(pa[i], "%d", &x)
		fmt.Sscanf(pb[i], "%d", &y)
		if x != y {
			return x < y
		}
	}
	return a < b
}
