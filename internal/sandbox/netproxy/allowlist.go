// Package netproxy is the command network's allowlist and the proxy that enforces it: an
// HTTP proxy (plain requests and CONNECT tunnels) and a SOCKS5 proxy on one listener, run in
// massgen's own process. A sandboxed command reaches nothing but this proxy (package sandbox
// makes sure of that, per platform); the proxy lets through the hosts the config's
// command_network.allowed_domains names, refuses the rest with an explanation (an HTTP 403
// whose body names the host and the config key), and reports every connection.
//
// It imports only the standard library: the allowlist's parser is also the config's
// validator (package configs).
package netproxy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ConfigKey is the config key a refusal tells the user to extend.
const ConfigKey = "command_network.allowed_domains"

// Entry is one allowed_domains entry: a host name ("pypi.org"), a wildcard ("*.pythonhosted.org":
// any name below, not the name itself) or an IP address, with an optional port ("127.0.0.1:8000",
// "[::1]:8000"; none: any port).
type Entry struct {
	Raw string
	// Name is the host name, lower-case, without a trailing dot; for a wildcard, the part
	// after "*.". Empty for an address.
	Name     string
	Wildcard bool
	Addr     netip.Addr // valid for an address entry
	Port     int        // 0: any port
}

// ParseEntry parses one allowed_domains entry.
func ParseEntry(s string) (Entry, error) {
	e := Entry{Raw: s}
	host := strings.TrimSpace(s)
	if host != s || host == "" {
		return e, fmt.Errorf("%q is not a host name (a host, *.host, an address, each with an optional :port)", s)
	}
	if strings.Contains(host, "://") || strings.ContainsAny(host, "/?#@ \t") {
		return e, fmt.Errorf("%q is not a host name: write the host alone (pypi.org, *.pythonhosted.org, 127.0.0.1:8000), without a scheme or path", s)
	}
	// A bare IPv6 address has colons but no port.
	if a, err := netip.ParseAddr(host); err == nil {
		e.Addr = a.Unmap()
		return e, nil
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		p, err := strconv.Atoi(host[i+1:])
		if err != nil || p < 1 || p > 65535 {
			return e, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
		e.Port, host = p, host[:i]
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			a, err := netip.ParseAddr(host[1 : len(host)-1])
			if err != nil || !a.Is6() {
				return e, fmt.Errorf("%q: [%s] is not an IPv6 address", s, host[1:len(host)-1])
			}
			e.Addr = a.Unmap()
			return e, nil
		}
		if a, err := netip.ParseAddr(host); err == nil {
			if a.Is6() {
				return e, fmt.Errorf("%q: write an IPv6 address with a port as [address]:port", s)
			}
			e.Addr = a
			return e, nil
		}
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		e.Wildcard, host = true, rest
	}
	name, ok := normalName(host)
	if !ok {
		return e, fmt.Errorf("%q is not a host name (letters, digits, '-' and '_' in dot-separated labels; a leading *. for the names below a domain)", s)
	}
	e.Name = name
	return e, nil
}

// normalName is host as entries and requests are compared: lower-case, without the trailing dot
// of a fully qualified name. ok is false for anything but a DNS name of ASCII labels (a
// non-ASCII name must be written in its xn-- form).
func normalName(host string) (string, bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" || len(host) > 253 {
		return "", false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return host, true
}

func (e Entry) portOK(port int) bool { return e.Port == 0 || e.Port == port }

// Allowlist is a parsed allowed_domains list. A nil or empty Allowlist allows nothing.
type Allowlist struct{ entries []Entry }

// NewAllowlist parses entries; an error names the first bad entry by its index.
func NewAllowlist(entries []string) (*Allowlist, error) {
	a := &Allowlist{}
	for i, s := range entries {
		e, err := ParseEntry(s)
		if err != nil {
			return nil, fmt.Errorf("allowed_domains[%d]: %w", i, err)
		}
		a.entries = append(a.entries, e)
	}
	return a, nil
}

// Entries returns the entries as written.
func (a *Allowlist) Entries() []string {
	if a == nil {
		return nil
	}
	out := make([]string, len(a.entries))
	for i, e := range a.entries {
		out[i] = e.Raw
	}
	return out
}

// ListsLoopback says whether an entry names a loopback address (or localhost): the command's
// own loopback then goes through the proxy too, to reach the host's.
func (a *Allowlist) ListsLoopback() bool {
	if a == nil {
		return false
	}
	for _, e := range a.entries {
		if e.Addr.IsValid() && e.Addr.IsLoopback() || e.Name == "localhost" && !e.Wildcard {
			return true
		}
	}
	return false
}

// Decision is the allowlist's answer for a host and port.
type Decision struct {
	Allow bool
	// Entry is the entry that allowed it.
	Entry string
	// Reason says why it was refused (for the 403 body and the audit log).
	Reason string
}

// Decide answers for a request naming host (a name or an address) and port, before any name is
// resolved: an address must be listed as such, a name must match a name entry (exactly, or below
// a wildcard's domain). Where a name leads is checked when it is resolved (AllowAddr).
func (a *Allowlist) Decide(host string, port int) Decision {
	if addr, ok := parseAddr(host); ok {
		if e, ok := a.entryForAddr(addr, port); ok {
			return Decision{Allow: true, Entry: e.Raw}
		}
		return Decision{Reason: fmt.Sprintf("%s is not in %s", hostPort(host, port), ConfigKey)}
	}
	name, ok := normalName(host)
	if !ok {
		return Decision{Reason: fmt.Sprintf("%q is not a host name", host)}
	}
	if a != nil {
		for _, e := range a.entries {
			if e.Name == "" || !e.portOK(port) {
				continue
			}
			if !e.Wildcard && name == e.Name || e.Wildcard && strings.HasSuffix(name, "."+e.Name) {
				return Decision{Allow: true, Entry: e.Raw}
			}
		}
	}
	return Decision{Reason: fmt.Sprintf("%s is not in %s", hostPort(name, port), ConfigKey)}
}

// AllowAddr says whether a name allowed by Decide may lead to addr: an address of the open
// internet may; a loopback, private, link-local or otherwise internal one (Internal) only when an
// entry lists that address exactly (or the name is localhost and listed exactly), so that an
// allowed name, a wildcard's especially, cannot be pointed at the machine's own services or the
// local network by whoever controls its DNS.
func (a *Allowlist) AllowAddr(name string, addr netip.Addr, port int) Decision {
	addr = addr.Unmap()
	if !Internal(addr) {
		return Decision{Allow: true}
	}
	if e, ok := a.entryForAddr(addr, port); ok {
		return Decision{Allow: true, Entry: e.Raw}
	}
	if n, _ := normalName(name); n == "localhost" && addr.IsLoopback() && a != nil {
		for _, e := range a.entries {
			if e.Name == "localhost" && !e.Wildcard && e.portOK(port) {
				return Decision{Allow: true, Entry: e.Raw}
			}
		}
	}
	return Decision{Reason: fmt.Sprintf("%s resolves to %s, an internal address (loopback, private or link-local), reachable only when listed exactly: add %q to %s",
		name, addr, hostPort(addr.String(), port), ConfigKey)}
}

func (a *Allowlist) entryForAddr(addr netip.Addr, port int) (Entry, bool) {
	if a == nil {
		return Entry{}, false
	}
	for _, e := range a.entries {
		if e.Addr.IsValid() && e.Addr == addr && e.portOK(port) {
			return e, true
		}
	}
	return Entry{}, false
}

// parseAddr parses host as an IP address ("[::1]" too), IPv4-mapped addresses unmapped.
func parseAddr(host string) (netip.Addr, bool) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// Internal reports whether addr belongs to this machine or a local network rather than the open
// internet: unspecified, loopback, private (RFC 1918, IPv6 unique local), link-local (cloud
// metadata services live at 169.254.169.254), multicast, shared address space (RFC 6598),
// "this network" (0.0.0.0/8), benchmarking (RFC 2544), reserved (240.0.0.0/4) and the IPv6
// forms that embed an IPv4 address (NAT64, 6to4, Teredo), which could carry any of those.
func Internal(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsUnspecified() || addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsMulticast() {
		return true
	}
	for _, p := range internalPrefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

var internalPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4",
		"64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32", "::/96"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// hostPort joins host and port, bracketing an IPv6 address.
func hostPort(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}
