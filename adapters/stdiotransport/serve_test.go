package stdiotransport

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

type rootsIn struct {
	Prefix string `json:"prefix"`
}

type rootsOut struct {
	Text string `json:"text"`
}

// serveScript runs a go-sdk server over the transport mk builds, writes
// each client line to it (after reading want[i] lines of output for
// step i), and returns every line the server wrote and Run's error.
func serveScript(t *testing.T, mk func(io.ReadCloser, io.WriteCloser) mcp.Transport, steps []scriptStep) ([]string, error) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, in rootsIn) (*mcp.CallToolResult, rootsOut, error) {
		res, err := req.Session.ListRoots(ctx, nil) // a request of the server's own
		if err != nil {
			return nil, rootsOut{}, err
		}
		text := in.Prefix
		for _, r := range res.Roots {
			text += r.URI
		}
		return nil, rootsOut{Text: text}, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, mk(inR, outW)) }()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	for i, s := range steps {
		_, err := io.WriteString(inW, s.line)
		if i < len(steps)-1 {
			require.NoError(t, err) // the last line may end the server while it is written
		}
		for range s.replies {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "the server ended early")
				got = append(got, l)
			case <-ctx.Done():
				t.Fatal("no reply")
			}
		}
	}
	select {
	case err := <-done:
		return got, err
	case <-ctx.Done():
		t.Fatal("the server did not end")
		return nil, nil
	}
}

type scriptStep struct {
	line    string
	replies int // lines the server writes after it
}

func ioTransport(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	return &mcp.IOTransport{Reader: in, Writer: out}
}

// TestServerTransportAsIOTransport: the same client lines get the same
// server lines over ServerTransport as over the SDK's IOTransport, for
// requests with params, notifications, a response to the server's own
// request and a string id; a line that is not a message, or an
// overlong one, ends both.
func TestServerTransportAsIOTransport(t *testing.T) {
	session := []scriptStep{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}` + "\n", 1},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n", 0},
		{`{"jsonrpc":"2.0","id":"two","method":"tools/list"}` + "\n", 1},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"roots","arguments":{"prefix":"p\u00e9:"}}}` + "\n", 1}, // the server's roots/list
		{`{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///r"}]}}` + "\n", 1},                                          // the call's result
		{`{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n\n", 1},
	}
	ends := []struct {
		name string
		line string
		cap  bool
	}{
		{name: "not json", line: "not json\n"},
		{name: "not a message", line: `{"jsonrpc":"1.0","id":5,"method":"ping"}` + "\n"},
		{name: "over the receive cap", line: `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"s":"` + strings.Repeat("x", DefaultMaxLineLength) + `"}}` + "\n", cap: true},
	}
	for _, end := range ends {
		t.Run(end.name, func(t *testing.T) {
			steps := append(append([]scriptStep{}, session...), scriptStep{line: end.line})
			want, wantErr := serveScript(t, ioTransport, steps)
			got, err := serveScript(t, ServerTransport, steps)
			require.Len(t, want, 5)
			assert.Equal(t, want, got)
			assert.Contains(t, got[2], `"id":1,"method":"roots/list"`)
			assert.Contains(t, got[3], "p\u00e9:file:///r")
			require.Error(t, wantErr)
			require.Error(t, err)
			if end.cap {
				assert.Equal(t, "receive_cap_exceeded", refusal.ReasonOf(err))
			}
		})
	}
}

// TestServerTransportClosesBoth: closing the connection closes in and
// out, once each.
func TestServerTransportClosesBoth(t *testing.T) {
	in, out := &countCloser{}, &countCloser{}
	c, err := ServerTransport(struct {
		io.Reader
		io.Closer
	}{strings.NewReader(""), in}, struct {
		io.Writer
		io.Closer
	}{io.Discard, out}).Connect(context.Background())
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	assert.Equal(t, 1, in.closes)
	assert.Equal(t, 1, out.closes)
}

// readAll reads a connection's messages until its first error.
func readAll(t *testing.T, mk func(io.ReadCloser, io.WriteCloser) mcp.Transport, data []byte) []jsonrpc.Message {
	t.Helper()
	c, err := mk(io.NopCloser(bytes.NewReader(data)), nopWriter{}).Connect(context.Background())
	require.NoError(t, err)
	defer c.Close()
	var msgs []jsonrpc.Message
	for range 10000 {
		m, err := c.Read(context.Background())
		if err != nil {
			return msgs
		}
		msgs = append(msgs, m)
	}
	t.Fatal("the connection did not end")
	return nil
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriter) Close() error                { return nil }

// FuzzServerTransport: whatever a client writes, ServerTransport's
// connection delivers the messages IOTransport's delivers, the same ones
// in the same order, up to the first line it refuses (where IOTransport
// may read on: a message over several lines, a batch).
func FuzzServerTransport(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}` + "\n" + `{"jsonrpc":"2.0","method":"n"}` + "\r\n" + `{"jsonrpc":"2.0","id":"a","result":{"x":[1]}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","data":null}}` + "\n\n" + `[{"jsonrpc":"2.0","method":"b"}]` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0",` + "\n" + `"method":"x"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got := readAll(t, ServerTransport, data)
		want := readAll(t, ioTransport, data)
		require.LessOrEqual(t, len(got), len(want), "a message IOTransport refuses")
		for i := range got {
			requireSameMessage(t, want[i], got[i])
		}
	})
}

// A line that is not one JSON-RPC message (a message over two lines, a
// batch) ends the connection with Protocol malformed_message, whose
// detail says what was wrong and never holds the line's bytes.
func TestServerTransportMalformedIsRefusal(t *testing.T) {
	for name, line := range map[string]string{
		"two lines": "{\"jsonrpc\":\n\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"canary-7f3a\"}}\n",
		"batch":     "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"canary-7f3a\"}]\n",
		"not json":  "canary-7f3a\n",
	} {
		t.Run(name, func(t *testing.T) {
			out := nopWriter{}
			conn, err := ServerTransport(io.NopCloser(strings.NewReader(line)), out).Connect(context.Background())
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.Read(context.Background())
			require.Error(t, err)
			var re *refusal.Error
			require.ErrorAs(t, err, &re)
			assert.Equal(t, refusal.Protocol, re.Class)
			assert.Equal(t, "malformed_message", re.Reason)
			assert.Contains(t, re.Detail, "one message a line")
			assert.NotContains(t, err.Error(), "canary-7f3a")
		})
	}
}
