package netproxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// SOCKS5 (RFC 1928), the part clients use through ALL_PROXY=socks5h://: no authentication, the
// CONNECT command, IPv4, IPv6 and domain-name addresses (socks5h: the proxy resolves, so the
// allowlist sees the name).
const (
	socksVersion     = 5
	socksNoAuth      = 0
	socksNoMethod    = 0xff
	socksConnect     = 1
	socksIPv4        = 1
	socksDomain      = 3
	socksIPv6        = 4
	socksOK          = 0
	socksFailure     = 1
	socksNotAllowed  = 2
	socksUnreachable = 4
	socksCmdNotSupp  = 7
	socksAddrNotSupp = 8
)

// socks serves one SOCKS5 connection (its first byte, the version, not yet consumed from r).
func (s *serving) socks(c net.Conn, r io.Reader) {
	c.SetReadDeadline(time.Now().Add(firstByteTimeout))
	host, port, err := socksRequest(c, r)
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	up, status, _ := s.open(s.ctx, "socks5", host, port)
	if up == nil {
		code := byte(socksUnreachable)
		if status == http.StatusForbidden {
			code = socksNotAllowed
		}
		socksReply(c, code)
		return
	}
	if !s.track(up) {
		socksReply(c, socksFailure)
		return
	}
	defer s.untrack(up)
	if socksReply(c, socksOK) != nil {
		return
	}
	splice(c, up)
}

var errSocks = errors.New("bad SOCKS5 request")

// socksRequest reads the greeting, accepts no authentication, and reads a CONNECT request,
// answering the requests it cannot serve.
func socksRequest(c net.Conn, r io.Reader) (string, int, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || hdr[0] != socksVersion {
		return "", 0, errSocks
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(r, methods); err != nil {
		return "", 0, errSocks
	}
	method := byte(socksNoMethod)
	for _, m := range methods {
		if m == socksNoAuth {
			method = socksNoAuth
		}
	}
	if _, err := c.Write([]byte{socksVersion, method}); err != nil || method != socksNoAuth {
		return "", 0, errSocks
	}
	var req [4]byte
	if _, err := io.ReadFull(r, req[:]); err != nil || req[0] != socksVersion {
		return "", 0, errSocks
	}
	if req[1] != socksConnect {
		socksReply(c, socksCmdNotSupp)
		return "", 0, errSocks
	}
	var host string
	switch req[3] {
	case socksIPv4, socksIPv6:
		n := 4
		if req[3] == socksIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", 0, errSocks
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case socksDomain:
		var l [1]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return "", 0, errSocks
		}
		b := make([]byte, l[0])
		if _, err := io.ReadFull(r, b); err != nil {
			return "", 0, errSocks
		}
		host = string(b)
	default:
		socksReply(c, socksAddrNotSupp)
		return "", 0, errSocks
	}
	var p [2]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return "", 0, errSocks
	}
	port := int(binary.BigEndian.Uint16(p[:]))
	if port == 0 || host == "" {
		socksReply(c, socksAddrNotSupp)
		return "", 0, errSocks
	}
	return host, port, nil
}

// socksReply answers a request with code; the bound address is not meaningful here (zeros).
func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{socksVersion, code, 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	return err
}
