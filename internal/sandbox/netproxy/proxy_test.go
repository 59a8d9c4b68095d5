package netproxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testProxy serves a proxy whose Connect maps host names to local servers (hosts), and
// collects its events.
type testProxy struct {
	addr   string
	mu     sync.Mutex
	events []Event
}

func (tp *testProxy) Events() []Event {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]Event(nil), tp.events...)
}

func startProxy(t *testing.T, allowed []string, hosts map[string]string) *testProxy {
	t.Helper()
	a, err := NewAllowlist(allowed)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &testProxy{addr: ln.Addr().String()}
	p := &Proxy{
		Allow: a,
		Connect: func(ctx context.Context, host string, port int) (net.Conn, error) {
			target, ok := hosts[net.JoinHostPort(host, strconv.Itoa(port))]
			if !ok {
				return nil, fmt.Errorf("test: no server for %s:%d", host, port)
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", target)
		},
		Report: func(e Event) {
			tp.mu.Lock()
			tp.events = append(tp.events, e)
			tp.mu.Unlock()
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return tp
}

func TestProxyHTTPAndConnect(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "plain %s %s", r.Host, r.URL.Path)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "secure %s", r.URL.Path)
	}))
	defer secure.Close()
	tp := startProxy(t, []string{"*.example", "api.test:443"}, map[string]string{
		"a.example:80":   plain.Listener.Addr().String(),
		"api.test:443":   secure.Listener.Addr().String(),
		"b.a.example:80": plain.Listener.Addr().String(),
	})
	tlsConf := secure.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsConf.ServerName = "example.com" // httptest's certificate
	pu, _ := url.Parse("http://" + tp.addr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: tlsConf}}

	get := func(u string) (int, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://a.example/x"); code != 200 || body != "plain a.example /x" {
		t.Errorf("HTTP through the proxy: %d %q", code, body)
	}
	if code, body := get("http://b.a.example/y"); code != 200 || body != "plain b.a.example /y" {
		t.Errorf("HTTP through the proxy, deeper name: %d %q", code, body)
	}
	// The Host header is the URL's, the host decided on (no fronting another site).
	if c, err := net.Dial("tcp", tp.addr); err != nil {
		t.Error(err)
	} else {
		fmt.Fprintf(c, "GET http://a.example/f HTTP/1.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		c.Close()
		if string(b) != "plain a.example /f" {
			t.Errorf("Host header: the server saw %q", b)
		}
	}
	if code, body := get("https://api.test/z"); code != 200 || body != "secure /z" {
		t.Errorf("HTTPS (CONNECT) through the proxy: %d %q", code, body)
	}
	// Refused: the 403's body names the host and the config key.
	code, body := get("http://example/")
	if code != http.StatusForbidden || !strings.Contains(body, "example:80") || !strings.Contains(body, "command_network.allowed_domains") {
		t.Errorf("not listed: %d %q", code, body)
	}
	code, body = get("http://a.example.evil/")
	if code != http.StatusForbidden || !strings.Contains(body, `"a.example.evil" (any port)`) {
		t.Errorf("a.example.evil: %d %q", code, body)
	}
	// CONNECT refused: the status and body as the client sees them on the wire.
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	c.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "evil.test:443 is not in command_network.allowed_domains") {
		t.Errorf("CONNECT refused: %d %q", resp.StatusCode, b)
	}
	// CONNECT to a listed name on another port: refused (api.test is listed with :443).
	if code, _ := get("http://api.test/"); code != 403 {
		t.Errorf("api.test:80: %d", code)
	}

	want := []string{"http a.example:80 allowed *.example", "http b.a.example:80 allowed *.example", "http a.example:80 allowed *.example", "connect api.test:443 allowed api.test:443",
		"http example:80 refused", "http a.example.evil:80 refused", "connect evil.test:443 refused", "http api.test:80 refused"}
	var got []string
	for _, e := range tp.Events() {
		s := e.Kind + " " + e.Target() + " " + e.Verdict()
		if e.Entry != "" {
			s += " " + e.Entry
		}
		if e.Allowed != (e.Reason == "") {
			t.Errorf("event %+v: a refusal needs a reason, an allowed connection none", e)
		}
		got = append(got, s)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// socksDial speaks SOCKS5 CONNECT by domain name and returns the reply code.
func socksDial(t *testing.T, proxy, host string, port int) (net.Conn, byte) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte{5, 1, 0})
	var m [2]byte
	if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0} {
		t.Fatalf("greeting: %v %v", m, err)
	}
	req := []byte{5, 1, 0, 3, byte(len(host))}
	req = append(req, host...)
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	c.Write(req)
	var rep [10]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		t.Fatalf("reply: %v", err)
	}
	return c, rep[1]
}

func TestProxySOCKS5(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "via socks") }))
	defer plain.Close()
	tp := startProxy(t, []string{"*.example"}, map[string]string{"a.example:80": plain.Listener.Addr().String()})
	c, code := socksDial(t, tp.addr, "a.example", 80)
	if code != 0 {
		t.Fatalf("allowed host: reply %d", code)
	}
	fmt.Fprintf(c, "GET / HTTP/1.0\r\nHost: a.example\r\n\r\n")
	b, _ := io.ReadAll(c)
	c.Close()
	if !strings.HasSuffix(string(b), "via socks") {
		t.Errorf("through SOCKS5: %q", b)
	}
	c, code = socksDial(t, tp.addr, "example", 80)
	c.Close()
	if code != socksNotAllowed {
		t.Errorf("not listed: reply %d, want %d", code, socksNotAllowed)
	}
	ev := tp.Events()
	if len(ev) != 2 || !ev[0].Allowed || ev[0].Kind != "socks5" || ev[1].Allowed || ev[1].Target() != "example:80" {
		t.Errorf("events: %+v", ev)
	}
}

// TestProxyEnds: when Serve's context ends, open tunnels are closed and Serve returns.
func TestProxyEnds(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c)
		}
	}()
	a, _ := NewAllowlist([]string{"echo.example"})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	p := &Proxy{Allow: a, Connect: func(ctx context.Context, host string, port int) (net.Conn, error) {
		return net.Dial("tcp", echo.Addr().String())
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	c, code := socksDial(t, ln.Addr().String(), "echo.example", 7)
	if code != 0 {
		t.Fatalf("reply %d", code)
	}
	c.Write([]byte("ping"))
	var b [4]byte
	if _, err := io.ReadFull(c, b[:]); err != nil || string(b[:]) != "ping" {
		t.Fatalf("echo: %q %v", b, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(b[:]); err == nil {
		t.Error("the tunnel is still open after Serve returned")
	}
	c.Close()
}

// TestProxyBadRequests: a request without an absolute http:// URL is a 400, and no connection.
func TestProxyBadRequests(t *testing.T) {
	tp := startProxy(t, []string{"a.example"}, nil)
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /relative HTTP/1.1\r\nHost: a.example\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 {
		t.Errorf("relative request: %d", resp.StatusCode)
	}
	if len(tp.Events()) != 0 {
		t.Errorf("events for a bad request: %+v", tp.Events())
	}
}

// TestProxyConnectionCap: a command cannot make the proxy hold more than maxConns connections at
// once (each is descriptors and memory in massgen); the next one is served when one ends.
func TestProxyConnectionCap(t *testing.T) {
	tp := startProxy(t, []string{"a.example"}, nil)
	var idle []net.Conn
	for i := 0; i < maxConns; i++ {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", tp.addr) // in the listener's backlog
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte{5, 1, 0})
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var m [2]byte
	if _, err := io.ReadFull(c, m[:]); err == nil {
		t.Fatal("a connection past the cap was served")
	}
	idle[0].Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0} {
		t.Fatalf("served after a slot freed: %v %v", m, err)
	}
}
