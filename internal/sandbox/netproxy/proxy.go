package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Event is one connection the proxy allowed or refused.
type Event struct {
	Time time.Time
	// Kind is how the command asked: "http" (a plain request), "connect" (an HTTP CONNECT
	// tunnel, as for HTTPS) or "socks5".
	Kind    string
	Host    string
	Port    int
	Allowed bool
	// Entry is the allowed_domains entry that let it through.
	Entry string
	// Reason says why it was refused, or why an allowed connection failed ("" when it
	// succeeded).
	Reason string
}

// Target is host:port.
func (e Event) Target() string { return hostPort(e.Host, e.Port) }

// Verdict is "allowed" or "refused".
func (e Event) Verdict() string {
	if e.Allowed {
		return "allowed"
	}
	return "refused"
}

// Resolver looks host names up (*net.Resolver is one).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// RefusedError is a connection the allowlist refused.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "refused: " + e.Reason }

// Connector opens the proxy's connections to hosts the allowlist allows: it resolves a name,
// keeps the addresses AllowAddr accepts, and dials them in turn.
type Connector struct {
	Allow    *Allowlist
	Resolver Resolver                                                             // nil: net.DefaultResolver
	Dial     func(ctx context.Context, network, address string) (net.Conn, error) // nil: a net.Dialer
}

// Connect opens a TCP connection to host:port (host already allowed by Decide). A name whose
// addresses are all refused by AllowAddr is a *RefusedError.
func (c *Connector) Connect(ctx context.Context, host string, port int) (net.Conn, error) {
	dial := c.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		dial = d.DialContext
	}
	var addrs []netip.Addr
	if a, ok := parseAddr(host); ok {
		addrs = []netip.Addr{a} // listed exactly: Decide checked it
	} else {
		r := c.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		found, err := r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", host, err)
		}
		var refused *RefusedError
		for _, a := range found {
			if d := c.Allow.AllowAddr(host, a, port); d.Allow {
				addrs = append(addrs, a.Unmap())
			} else if refused == nil {
				refused = &RefusedError{Reason: d.Reason}
			}
		}
		if len(addrs) == 0 {
			if refused == nil {
				refused = &RefusedError{Reason: host + " has no address"}
			}
			return nil, refused
		}
	}
	var errs []error
	for _, a := range addrs {
		conn, err := dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// Proxy serves one command's connections: HTTP requests with an absolute http:// URL, HTTP
// CONNECT tunnels and SOCKS5 CONNECT requests, told apart by their first byte.
type Proxy struct {
	Allow *Allowlist
	// Connect opens a connection to an allowed host:port; nil: a Connector over Allow. Tests
	// give one that maps host names to local servers.
	Connect func(ctx context.Context, host string, port int) (net.Conn, error)
	// Report hears of every connection allowed or refused (nil: nobody). It may be called from
	// several goroutines at once.
	Report func(Event)
}

// firstByteTimeout bounds how long a connection may stay silent before it says what it is.
const firstByteTimeout = 30 * time.Second

// maxConns bounds the connections one Serve handles at once: each holds descriptors and memory
// in massgen's process, which a command must not exhaust. More wait in the listener's backlog.
const maxConns = 256

// Serve answers the connections of ln until ctx ends or ln fails, then closes ln and every
// connection it opened, and returns.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hl := &chanListener{addr: ln.Addr(), c: make(chan net.Conn), done: make(chan struct{})}
	s := &serving{p: p, ctx: ctx, conns: map[net.Conn]struct{}{}, hl: hl}
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: firstByteTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go srv.Serve(hl)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	slots := make(chan struct{}, maxConns)
	var err error
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		var c net.Conn
		c, err = ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				err = nil
			}
			break
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.sniff(&slotConn{Conn: c, release: func() { <-slots }})
		}()
	}
	cancel()
	ln.Close()
	hl.Close()
	srv.Close()
	s.closeAll()
	s.wg.Wait()
	s.handlers.Wait()
	return err
}

// slotConn gives its slot back when closed (once).
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes the underlying TCP connection.
func (c *slotConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// serving is one Serve call's state.
type serving struct {
	p     *Proxy
	ctx   context.Context
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{} // tunnels and SOCKS connections, both ends
	ended bool
	// handlers counts the HTTP handlers running (entered only before ended), so that Serve
	// returns after the last connection was reported.
	handlers sync.WaitGroup
	hl       *chanListener
}

// enter registers an HTTP handler; false once Serve is ending.
func (s *serving) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.handlers.Add(1)
	return true
}

// track registers c to be closed when Serve ends (false: it already ended; c is closed).
func (s *serving) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *serving) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

func (s *serving) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	for c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

// sniff reads the connection's first byte: 5 is SOCKS5; anything else goes to the HTTP server.
func (s *serving) sniff(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(firstByteTimeout))
	br := bufio.NewReader(c)
	b, err := br.Peek(1)
	c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	bc := &bufConn{Conn: c, r: br}
	if b[0] == 5 {
		if s.track(bc) {
			defer s.untrack(bc)
			s.socks(bc, br)
		}
		return
	}
	if !s.hl.push(bc) {
		c.Close()
	}
}

func (s *serving) report(e Event) {
	if s.p.Report != nil {
		e.Time = time.Now()
		s.p.Report(e)
	}
}

// open decides and, when allowed, connects: the event is reported either way. status is the
// HTTP status of a failure (403 refused, 502 unreachable).
func (s *serving) open(ctx context.Context, kind, host string, port int) (conn net.Conn, status int, reason string) {
	ev := Event{Kind: kind, Host: host, Port: port}
	d := s.p.Allow.Decide(host, port)
	if !d.Allow {
		ev.Reason = d.Reason
		s.report(ev)
		return nil, http.StatusForbidden, d.Reason
	}
	ev.Allowed, ev.Entry = true, d.Entry
	connect := s.p.Connect
	if connect == nil {
		connect = (&Connector{Allow: s.p.Allow}).Connect
	}
	conn, err := connect(ctx, host, port)
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		ev.Allowed, ev.Entry, ev.Reason = false, "", refused.Reason
		s.report(ev)
		return nil, http.StatusForbidden, refused.Reason
	case err != nil:
		ev.Reason = err.Error()
		s.report(ev)
		return nil, http.StatusBadGateway, err.Error()
	}
	s.report(ev)
	return conn, 0, ""
}

// RefusalBody is the body of the 403 a refused request gets: what was refused, why, and the
// config key that would allow it.
func RefusalBody(host string, port int, reason string) string {
	target := hostPort(host, port)
	allow := fmt.Sprintf("%q", target)
	if _, isAddr := parseAddr(host); !isAddr {
		allow = fmt.Sprintf("%q (any port) or %q", strings.TrimSuffix(strings.ToLower(host), "."), target)
	}
	return fmt.Sprintf("massgen refused this command's connection to %s: %s.\n"+
		"Commands reach only the hosts their agent's %s lists. To allow this one, add %s to "+
		"%s of the agent (agents[].command_network) or of every agent (orchestrator.command_network) in the config, "+
		"or set command_network.mode: open to let commands reach any host.\n", target, reason, ConfigKey, allow, ConfigKey)
}

func (s *serving) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		return
	}
	defer s.handlers.Done()
	if r.Method == http.MethodConnect {
		s.tunnel(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "massgen's proxy takes requests for absolute http:// URLs and CONNECT host:port (HTTPS)", http.StatusBadRequest)
		return
	}
	host, port, ok := splitHostPort(r.URL.Host, 80)
	if !ok {
		http.Error(w, fmt.Sprintf("massgen's proxy: bad host %q", r.URL.Host), http.StatusBadRequest)
		return
	}
	conn, status, reason := s.open(r.Context(), "http", host, port)
	if conn == nil {
		s.fail(w, status, host, port, reason)
		return
	}
	// One request per connection: each request is its own decision and its own record.
	used := false
	tr := &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			if used {
				return nil, errors.New("massgen's proxy: one request per connection")
			}
			used = true
			return conn, nil
		},
		DisableKeepAlives: true,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			// The Host header is the URL's host, the one decided on: another one would reach
			// a different site behind the same server (domain fronting).
			pr.Out.Host = ""
			pr.Out.Header.Del("Proxy-Authorization")
		},
		Transport: tr,
		ErrorLog:  log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, fmt.Sprintf("massgen's proxy: %s: %v", hostPort(host, port), err), http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r)
	if !used {
		conn.Close()
	}
}

// fail answers a request that was refused (403, with RefusalBody) or could not be connected.
func (s *serving) fail(w http.ResponseWriter, status int, host string, port int, reason string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	if status == http.StatusForbidden {
		io.WriteString(w, RefusalBody(host, port, reason))
		return
	}
	fmt.Fprintf(w, "massgen's proxy could not reach %s: %s\n", hostPort(host, port), reason)
}

// tunnel answers CONNECT host:port.
func (s *serving) tunnel(w http.ResponseWriter, r *http.Request) {
	host, port, ok := splitHostPort(r.Host, -1)
	if !ok {
		http.Error(w, fmt.Sprintf("massgen's proxy: CONNECT needs host:port, got %q", r.Host), http.StatusBadRequest)
		return
	}
	up, status, reason := s.open(r.Context(), "connect", host, port)
	if up == nil {
		s.fail(w, status, host, port, reason)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "massgen's proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !s.track(c) || !s.track(up) {
		c.Close()
		up.Close()
		return
	}
	defer s.untrack(c)
	defer s.untrack(up)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// What the client sent after its request (a TLS hello, often) is already buffered.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	splice(c, up)
}

// splice copies both ways until both directions ended.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// splitHostPort splits "host:port" ("[::1]:443"); def is the port when none is given (-1:
// required).
func splitHostPort(s string, def int) (string, int, bool) {
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		if def < 0 || strings.Count(s, ":") > 0 && !strings.HasPrefix(s, "[") {
			return "", 0, false
		}
		host, ps = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), strconv.Itoa(def)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return "", 0, false
	}
	return host, port, true
}

// bufConn is a connection whose first bytes were read into r.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes the underlying TCP connection.
func (c *bufConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// chanListener hands the HTTP server the connections sniff passes it.
type chanListener struct {
	addr net.Addr
	c    chan net.Conn
	once sync.Once
	done chan struct{}
}

func (l *chanListener) push(c net.Conn) bool {
	select {
	case l.c <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }
