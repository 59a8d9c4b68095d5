package configs

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen/internal/vocab"
)

// MCPSecurity is MassGen's `security:` section of an MCP server: the checks a server must pass
// before it starts (SecurityProblems).
type MCPSecurity struct {
	// Level is strict (default), moderate, permissive or high: which programs may start a stdio
	// server, and which environment variables it may be given. high is what MassGen does with
	// any level it does not know (its configs write high): strict's programs, and an env policy
	// refusing PATH and HOME but not USER, USERNAME or SHELL.
	Level vocab.SecurityLevel `yaml:"level,omitempty" json:"level,omitempty"`
	// AllowedExecutables replaces the level's programs.
	AllowedExecutables []string `yaml:"allowed_executables,omitempty" json:"allowed_executables,omitempty"`
	// AllowedHostnames are hosts an http server's URL may name without the address checks.
	AllowedHostnames []string `yaml:"allowed_hostnames,omitempty" json:"allowed_hostnames,omitempty"`
	AllowLocalhost   bool     `yaml:"allow_localhost,omitempty" json:"allow_localhost,omitempty"`
	AllowPrivateIPs  bool     `yaml:"allow_private_ips,omitempty" json:"allow_private_ips,omitempty"`
	// ResolveDNS is read but not acted on (see the key table).
	ResolveDNS bool `yaml:"resolve_dns,omitempty" json:"resolve_dns,omitempty"`
	// Env is the policy on the server's env: variables.
	Env *MCPEnvPolicy `yaml:"env,omitempty" json:"env,omitempty"`
}

// MCPEnvPolicy is MassGen's policy on the environment variables given to a server.
type MCPEnvPolicy struct {
	Level       vocab.SecurityLevel `yaml:"level,omitempty" json:"level,omitempty"` // default: the server's level
	Mode        vocab.EnvMode       `yaml:"mode,omitempty" json:"mode,omitempty"`   // default: denylist
	AllowedVars []string            `yaml:"allowed_vars,omitempty" json:"allowed_vars,omitempty"`
	// DeniedVars replaces the level's denied variables when given (even empty).
	DeniedVars []string `yaml:"denied_vars" json:"denied_vars,omitempty"`
}

// strictExecutables are the programs MassGen lets start a stdio server at level strict (and
// high); moderate adds git and nodejs, permissive also curl and wget.
var strictExecutables = []string{
	"python", "python3", "python3.8", "python3.9", "python3.10", "python3.11", "python3.12", "python3.13", "python3.14", "py",
	"uv", "uvx", "pipx", "pip", "pip3",
	"node", "npm", "npx", "yarn", "pnpm", "bun",
	"deno", "java", "ruby", "go", "rust", "cargo", "fastmcp",
	"sh", "bash", "zsh", "fish", "powershell", "pwsh", "cmd",
}

func allowedExecutables(level vocab.SecurityLevel) []string {
	switch level {
	case vocab.SecurityModerate:
		return append(slices.Clone(strictExecutables), "git", "nodejs")
	case vocab.SecurityPermissive:
		return append(slices.Clone(strictExecutables), "git", "curl", "wget", "nodejs")
	}
	return strictExecutables
}

// refusedPorts are ports MassGen refuses in an http server's URL (ssh, smtp, dns, databases...).
var refusedPorts = []int{22, 23, 25, 53, 135, 139, 445, 1433, 1521, 3306, 3389, 5432, 6379}

// SecurityProblems lists why the server's `security:` section refuses to start it, as MassGen's
// checks do: a stdio server's program not allowed at its level (or by allowed_executables), shell
// metacharacters or ".." in its command, an environment variable the env policy refuses; an http
// server's URL that is not http(s), names this machine or a private address, or a refused port.
// A server without a security section is not checked (MassGen checks every server at level
// strict).
func (s MCPServer) SecurityProblems() []string {
	sec := s.Security
	if sec == nil {
		return nil
	}
	level := sec.Level
	if level == "" {
		level = vocab.SecurityStrict
	}
	var out []string
	if s.Command != "" {
		out = append(out, commandProblems(s.Command, level, sec.AllowedExecutables)...)
	}
	if s.URL != "" {
		if p := urlProblem(s.URL, sec); p != "" {
			out = append(out, p)
		}
	}
	if len(s.Env) > 0 {
		out = append(out, envProblems(s.Env, level, sec.Env)...)
	}
	return out
}

func commandProblems(command string, level vocab.SecurityLevel, explicit []string) []string {
	var out []string
	for _, c := range []string{"&", "|", ";", "`", "$", "(", ")", "<", ">"} {
		if strings.Contains(command, c) {
			out = append(out, fmt.Sprintf("command %q has the shell metacharacter %q", command, c))
			break
		}
	}
	if slices.Contains(strings.FieldsFunc(command, func(r rune) bool { return r == '/' || r == '\\' }), "..") {
		out = append(out, fmt.Sprintf("command %q goes up a directory (..)", command))
	}
	allowed := explicit
	what := "allowed_executables"
	if len(allowed) == 0 {
		allowed, what = allowedExecutables(level), "level "+string(level)
	}
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(command, `\`, "/")))
	for _, ext := range []string{".exe", ".bat", ".cmd", ".ps1"} {
		base = strings.TrimSuffix(base, ext)
	}
	if !slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, base) }) {
		sorted := slices.Sorted(slices.Values(allowed))
		out = append(out, fmt.Sprintf("program %q is not allowed by %s (allowed: %s)", base, what, strings.Join(sorted, ", ")))
	}
	return out
}

func urlProblem(raw string, sec *MCPSecurity) string {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("url %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("url %q: only http and https are allowed", raw)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return fmt.Sprintf("url %q has no host", raw)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("url %q: invalid port %s", raw, p)
		}
		if slices.Contains(refusedPorts, n) {
			return fmt.Sprintf("url %q: port %d is refused", raw, n)
		}
	}
	if slices.ContainsFunc(sec.AllowedHostnames, func(h string) bool { return strings.EqualFold(h, host) }) {
		return ""
	}
	if !sec.AllowLocalhost && (host == "localhost" || host == "ip6-localhost") {
		return fmt.Sprintf("url %q names this machine (allow_localhost: true allows it)", raw)
	}
	ip := net.ParseIP(host)
	if ip == nil || sec.AllowPrivateIPs {
		return ""
	}
	if ip.IsLoopback() && sec.AllowLocalhost {
		return ""
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || reservedIP(ip) {
		return fmt.Sprintf("url %q is a private, loopback or reserved address (allow_private_ips or allow_localhost allows it)", raw)
	}
	return ""
}

// reservedIP: the IPv4 ranges Python's ipaddress calls reserved (240.0.0.0/4) and the shared
// and documentation ranges it calls private.
func reservedIP(ip net.IP) bool {
	for _, cidr := range []string{"240.0.0.0/4", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "0.0.0.0/8"} {
		if _, n, err := net.ParseCIDR(cidr); err == nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

func envProblems(env map[string]string, level vocab.SecurityLevel, pol *MCPEnvPolicy) []string {
	if pol == nil {
		pol = &MCPEnvPolicy{}
	}
	if pol.Level != "" {
		level = pol.Level
	}
	denied := pol.DeniedVars
	if denied == nil {
		denied = []string{"LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "PYTHONPATH", "PWD", "OLDPWD"}
		switch level {
		case vocab.SecurityStrict:
			denied = append(denied, "PATH", "HOME", "USER", "USERNAME", "SHELL")
		case vocab.SecurityHigh: // MassGen's fallback for a level it does not know
			denied = append(denied, "PATH", "HOME")
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v := env[k]
		in := func(list []string) bool {
			return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, k) })
		}
		switch {
		case pol.Mode == vocab.EnvAllowlist && len(pol.AllowedVars) > 0 && !in(pol.AllowedVars):
			out = append(out, fmt.Sprintf("env %s is not in env.allowed_vars", k))
		case pol.Mode != vocab.EnvAllowlist && in(denied):
			out = append(out, fmt.Sprintf("env %s is refused at level %s", k, level))
		}
		for _, pat := range []string{"$(", "`", "&", ";", "|"} {
			if strings.Contains(v, pat) {
				out = append(out, fmt.Sprintf("env %s holds %q", k, pat))
				break
			}
		}
	}
	return out
}
