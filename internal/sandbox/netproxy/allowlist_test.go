package netproxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestParseEntry(t *testing.T) {
	tests := []struct {
		in       string
		name     string
		wildcard bool
		addr     string
		port     int
		err      string
	}{
		{in: "pypi.org", name: "pypi.org"},
		{in: "PyPI.org.", name: "pypi.org"},
		{in: "*.pythonhosted.org", name: "pythonhosted.org", wildcard: true},
		{in: "registry.npmjs.org:443", name: "registry.npmjs.org", port: 443},
		{in: "*.example:8443", name: "example", wildcard: true, port: 8443},
		{in: "127.0.0.1:8000", addr: "127.0.0.1", port: 8000},
		{in: "10.1.2.3", addr: "10.1.2.3"},
		{in: "::1", addr: "::1"},
		{in: "[::1]:8000", addr: "::1", port: 8000},
		{in: "[::ffff:127.0.0.1]:80", addr: "127.0.0.1", port: 80},
		{in: "localhost:3000", name: "localhost", port: 3000},
		{in: "under_score.example", name: "under_score.example"},
		{in: "", err: "not a host name"},
		{in: " pypi.org", err: "not a host name"},
		{in: "https://pypi.org", err: "without a scheme"},
		{in: "pypi.org/simple", err: "without a scheme"},
		{in: "a b", err: "without a scheme"},
		{in: "*", err: "not a host name"},
		{in: "*.", err: "not a host name"},
		{in: "a.*.example", err: "not a host name"},
		{in: "**.example", err: "not a host name"},
		{in: "pypi.org:0", err: "port must be"},
		{in: "pypi.org:65536", err: "port must be"},
		{in: "pypi.org:http", err: "port must be"},
		{in: "::1:80", addr: "::1:80"}, // an IPv6 address, not ::1 port 80
		{in: "1.2.3.4:80:1", err: "not a host name"},
		{in: "[pypi.org]:80", err: "not an IPv6 address"},
		{in: "-a.example", err: "not a host name"},
		{in: "a..example", err: "not a host name"},
		{in: "bücher.example", err: "not a host name"},
		{in: strings.Repeat("a", 64) + ".example", err: "not a host name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := ParseEntry(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseEntry(%q) = %+v, %v; want an error with %q", tt.in, e, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			addr := ""
			if e.Addr.IsValid() {
				addr = e.Addr.String()
			}
			if e.Name != tt.name || e.Wildcard != tt.wildcard || addr != tt.addr || e.Port != tt.port {
				t.Errorf("ParseEntry(%q) = %+v", tt.in, e)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	a, err := NewAllowlist([]string{"*.example", "pypi.org", "api.test:443", "127.0.0.1:8000", "203.0.113.7", "[::1]:9000"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host  string
		port  int
		allow bool
		entry string
	}{
		{"a.example", 443, true, "*.example"},
		{"b.a.example", 80, true, "*.example"},
		{"A.Example.", 443, true, "*.example"},
		{"example", 443, false, ""},
		{"a.example.evil", 443, false, ""},
		{"aexample", 443, false, ""},
		{"evil-a.example.com", 443, false, ""},
		{"pypi.org", 443, true, "pypi.org"},
		{"pypi.org", 22, true, "pypi.org"},
		{"files.pypi.org", 443, false, ""},
		{"api.test", 443, true, "api.test:443"},
		{"api.test", 80, false, ""},
		{"127.0.0.1", 8000, true, "127.0.0.1:8000"},
		{"127.0.0.1", 8001, false, ""},
		{"::ffff:127.0.0.1", 8000, true, "127.0.0.1:8000"},
		{"203.0.113.7", 25, true, "203.0.113.7"},
		{"[::1]", 9000, true, "[::1]:9000"},
		{"::1", 9000, true, "[::1]:9000"},
		{"::1", 9001, false, ""},
		{"localhost", 8000, false, ""},
		{"10.0.0.1", 443, false, ""},
		{"a.example\x00.evil", 443, false, ""},
		{"", 443, false, ""},
	}
	for _, tt := range tests {
		d := a.Decide(tt.host, tt.port)
		if d.Allow != tt.allow || d.Entry != tt.entry {
			t.Errorf("Decide(%q, %d) = %+v, want allow=%v entry=%q", tt.host, tt.port, d, tt.allow, tt.entry)
		}
		if !d.Allow && (d.Reason == "" || tt.host != "" && !strings.Contains(d.Reason, "not")) {
			t.Errorf("Decide(%q, %d): reason %q", tt.host, tt.port, d.Reason)
		}
	}
	var none *Allowlist
	if none.Decide("pypi.org", 443).Allow || none.Decide("127.0.0.1", 80).Allow {
		t.Error("a nil allowlist allowed something")
	}
}

func TestInternal(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "127.9.9.9", "::1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "fe80::1",
		"fc00::1", "0.0.0.0", "::", "100.64.0.1", "224.0.0.1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::7f00:1",
		"2002:7f00:1::", "198.18.0.1", "255.255.255.255"} {
		if !Internal(netip.MustParseAddr(s)) {
			t.Errorf("%s is not internal", s)
		}
	}
	for _, s := range []string{"203.0.113.7", "8.8.8.8", "2606:4700::1111", "151.101.0.223"} {
		if Internal(netip.MustParseAddr(s)) {
			t.Errorf("%s is internal", s)
		}
	}
}

// fakeResolver answers from a map.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	list, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range list {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// TestConnectorInternalAddresses: an allowed name leads to an internal address only when that
// address is listed exactly (or the name is localhost, listed exactly); public addresses are
// dialled. Nothing is really dialled: the test's Dial records the address.
func TestConnectorInternalAddresses(t *testing.T) {
	res := fakeResolver{
		"pypi.org":         {"151.101.0.223"},
		"rebind.example":   {"127.0.0.1"},
		"mixed.example":    {"10.0.0.5", "203.0.113.9"},
		"metadata.example": {"169.254.169.254"},
		"dev.example":      {"127.0.0.1"},
		"localhost":        {"127.0.0.1", "::1"},
	}
	tests := []struct {
		allowed []string
		host    string
		port    int
		dialled string // "" refused
	}{
		{[]string{"pypi.org"}, "pypi.org", 443, "151.101.0.223:443"},
		{[]string{"*.example"}, "rebind.example", 443, ""},
		{[]string{"*.example"}, "metadata.example", 80, ""},
		{[]string{"*.example"}, "mixed.example", 443, "203.0.113.9:443"},
		{[]string{"*.example", "127.0.0.1:8000"}, "dev.example", 8000, "127.0.0.1:8000"},
		{[]string{"*.example", "127.0.0.1:8000"}, "dev.example", 8001, ""},
		{[]string{"localhost:3000"}, "localhost", 3000, "127.0.0.1:3000"},
		{[]string{"127.0.0.1:8000"}, "127.0.0.1", 8000, "127.0.0.1:8000"},
	}
	for _, tt := range tests {
		t.Run(tt.host+"/"+strings.Join(tt.allowed, ","), func(t *testing.T) {
			a, err := NewAllowlist(tt.allowed)
			if err != nil {
				t.Fatal(err)
			}
			if d := a.Decide(tt.host, tt.port); !d.Allow {
				t.Fatalf("Decide refused: %s", d.Reason)
			}
			var dialled []string
			c := &Connector{Allow: a, Resolver: res, Dial: func(_ context.Context, network, addr string) (net.Conn, error) {
				dialled = append(dialled, addr)
				return nil, errors.New("test: not dialled")
			}}
			_, err = c.Connect(context.Background(), tt.host, tt.port)
			var refused *RefusedError
			if tt.dialled == "" {
				if !errors.As(err, &refused) || len(dialled) != 0 || !strings.Contains(refused.Reason, "internal address") ||
					!strings.Contains(refused.Reason, ConfigKey) {
					t.Fatalf("want a refusal naming the internal address, got %v (dialled %v)", err, dialled)
				}
				return
			}
			if errors.As(err, &refused) || len(dialled) == 0 || dialled[0] != tt.dialled {
				t.Fatalf("dialled %v (err %v), want %s", dialled, err, tt.dialled)
			}
		})
	}
}
