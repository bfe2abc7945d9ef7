package stdiotransport

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/adapters/internal/jsonrpcwire"
	"github.com/mcpward/mcpward/core/refusal"
)

// ServerTransport returns the go-sdk mcp.Transport of a server that
// serves one client over in (the client's messages, usually stdin) and
// out (its own, usually stdout): newline-delimited JSON-RPC 2.0, framed
// and decoded by this package as it frames and decodes a child's stdout,
// instead of the SDK's IOTransport, whose connection builds a fresh
// reflective decoder and its buffers for every message.
//
// Its connection behaves as IOTransport's does for every message the
// protocol allows: requests with or without params, notifications, and
// responses to the server's own requests are delivered as the SDK's
// jsonrpc.DecodeMessage decodes them, and every message written is
// encoded as jsonrpc.EncodeMessage encodes it. A line that is not one
// JSON-RPC message ends the connection, as with IOTransport, here with a
// *refusal.Error of Class Protocol, Reason "malformed_message"; so does a
// line longer than DefaultMaxLineLength bytes (the newline excluded;
// IOTransport's cap is the same size), with a *refusal.Error of Class
// Protocol, Reason "receive_cap_exceeded". Where
// it is stricter than IOTransport: a message must fit on one line (the
// protocol forbids embedded newlines), a line holds one message, and a
// JSON-RPC batch (a line holding an array) is refused, as IOTransport
// refuses one once a session negotiated protocol 2025-06-18 or later.
//
// Closing the connection closes in and then out (as IOTransport's Close
// does). Its reader runs on its own goroutine, which ends when in fails
// or, after Close, at the next line: an in whose Close does not unblock a
// pending Read (an os.Stdin wrapped in io.NopCloser) keeps it until then,
// as it keeps IOTransport's. The transport is for one Connect.
func ServerTransport(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	return &serverTransport{in: in, out: out, limit: DefaultMaxLineLength}
}

type serverTransport struct {
	in    io.ReadCloser
	out   io.WriteCloser
	limit int
}

// Connect returns the connection over in and out.
func (t *serverTransport) Connect(context.Context) (mcp.Connection, error) {
	r := &lineCapReader{r: t.in, limit: t.limit}
	return serverConn{newFrameConn(r, &bothCloser{in: t.in, out: t.out})}, nil
}

// serverConn reports a line the client wrote that is not one JSON-RPC
// message as Protocol "malformed_message", so that whoever runs the server
// can say why the connection ended; the decoder's own text names what was
// wrong with the line, never its bytes.
type serverConn struct{ *frameConn }

// Read returns the next message, or the connection's end.
func (c serverConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.frameConn.Read(ctx)
	if err != nil && ctx.Err() == nil && isDecodeFailure(err) {
		what := "the client wrote a line that is not one JSON-RPC message"
		for _, e := range []error{jsonrpcwire.ErrTruncated, jsonrpcwire.ErrSyntax, jsonrpcwire.ErrTooDeep, jsonrpcwire.ErrNotMessage, jsonrpcwire.ErrTrailing} {
			if errors.Is(err, e) {
				what += ": " + e.Error()
			}
		}
		return nil, &refusal.Error{Class: refusal.Protocol, Reason: "malformed_message",
			Detail: what + " (one message a line, no batches)"}
	}
	return m, err
}

// bothCloser writes to out; its Close closes in, then out, once.
type bothCloser struct {
	in   io.Closer
	out  io.WriteCloser
	once sync.Once
	err  error
}

func (b *bothCloser) Write(p []byte) (int, error) { return b.out.Write(p) }

func (b *bothCloser) Close() error {
	b.once.Do(func() { b.err = errors.Join(b.in.Close(), b.out.Close()) })
	return b.err
}
