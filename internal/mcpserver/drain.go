package mcpserver

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainingTransport makes the server answer every request it read before it stops. The SDK
// ends a session as soon as its reader reports the end of the input: requests still running or
// queued are cancelled and their replies dropped, so a client that writes its requests and then
// closes stdin (ids 1-3 piped, then EOF) got some of its answers, or none. Here the end of the
// input is held back from the SDK until every request read so far has been answered.
type drainingTransport struct {
	inner mcp.Transport
}

func (t *drainingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	zero := make(chan struct{})
	close(zero)
	return &drainingConn{Connection: c, owed: map[jsonrpc.ID]bool{}, zero: zero, closed: make(chan struct{})}, nil
}

// drainingConn counts the requests read and not yet answered.
type drainingConn struct {
	mcp.Connection

	mu   sync.Mutex
	owed map[jsonrpc.ID]bool // requests read, not yet answered
	zero chan struct{}       // closed while nothing is owed

	closeOnce sync.Once
	closed    chan struct{}
}

// cancelledParams are the params of notifications/cancelled: no reply is owed for that request.
type cancelledParams struct {
	RequestID any `json:"requestId"`
}

func (c *drainingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			// The end of the input (or a broken one): first let every request read be answered.
			c.waitPaid(ctx)
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		switch {
		case req.IsCall():
			if !c.owe(req.ID) {
				// The SDK drops a request whose id is in use without a word: answer it here
				// (not through c.Write, which would count it as the first one's reply).
				if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
					Code: CodeInvalidRequest, Message: "Invalid Request: the id is already used by a request in progress"}}); err != nil {
					return nil, err
				}
				continue
			}
		case req.Method == "notifications/cancelled":
			var p cancelledParams
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
					c.paid(id) // a cancelled request is owed no reply (MCP cancellation)
				}
			}
		}
		return msg, nil
	}
}

func (c *drainingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.IsValid() {
		c.paid(resp.ID) // written, or never will be: either way nothing more to wait for
	}
	return err
}

func (c *drainingConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// owe records a request read; false when its id is already owed a reply.
func (c *drainingConn) owe(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owed[id] {
		return false
	}
	if len(c.owed) == 0 {
		c.zero = make(chan struct{})
	}
	c.owed[id] = true
	return true
}

// paid records a reply written (or no longer owed).
func (c *drainingConn) paid(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.owed[id] {
		return
	}
	delete(c.owed, id)
	if len(c.owed) == 0 {
		close(c.zero)
	}
}

// waitPaid waits until every request read has been answered, the connection is closed (a
// failed write closes it: nothing more can be answered) or ctx is done.
func (c *drainingConn) waitPaid(ctx context.Context) {
	c.mu.Lock()
	zero := c.zero
	c.mu.Unlock()
	select {
	case <-zero:
	case <-c.closed:
	case <-ctx.Done():
	}
}
