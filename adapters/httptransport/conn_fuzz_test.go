package httptransport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/internal/jsonrpcwire"
	"github.com/mcpward/mcpward/core/egress"
)

// bodyServer answers every POST with body (as JSON or SSE), written in
// pieces cut at random points (seed) with a flush after each, so the
// client reads it in partial reads; every other request gets 405.
func bodyServer(t testing.TB, body []byte, sse bool, seed uint64) *testServer {
	return newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		for rest := body; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 64))
			_, _ = w.Write(rest[:n])
			fl.Flush()
			rest = rest[n:]
		}
	}))
}

// exchange writes one tools/call (id 1) on a connection of tr and reads
// what the connection delivers until the answer to it, a failure, or the
// end; it returns each message as encoded, and how it ended: "answered",
// "failed", or "silent" (nothing more within a second: a body that holds
// no answer to the call, such as a lone notification as JSON).
func exchange(t testing.TB, tr mcp.Transport) (msgs []string, end string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := tr.Connect(ctx)
	require.NoError(t, err)
	defer c.Close()
	id, _ := jsonrpc.MakeID(float64(1))
	call := &jsonrpc.Request{ID: id, Method: "tools/call", Params: []byte(`{"name":"echo","arguments":{}}`)}
	if err := c.Write(ctx, call); err != nil {
		return nil, "failed"
	}
	for {
		m, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return msgs, "silent"
			}
			return msgs, "failed"
		}
		b, err := jsonrpc.EncodeMessage(m)
		require.NoError(t, err)
		msgs = append(msgs, string(b))
		if r, ok := m.(*jsonrpc.Response); ok && r.ID == id {
			return msgs, "answered"
		}
	}
}

// loneCR reports whether b has a '\r' not followed by '\n': the SSE
// specification ends a line there, the go-sdk's reader does not (it splits
// at '\n' only and trims every trailing '\r'), so the two differ by
// design.
func loneCR(b []byte) bool {
	for i, c := range b {
		if c == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			return true
		}
	}
	return false
}

// trailing reports whether a message of body (the JSON body, or an SSE
// event's data) is one JSON value followed by more bytes.
func trailing(body []byte, sse bool) bool {
	if !sse {
		_, err := jsonrpcwire.Decode(body)
		return errors.Is(err, jsonrpcwire.ErrTrailing)
	}
	s := newSSEReader(bytes.NewReader(body), 1<<20)
	defer s.release()
	for {
		ev, err := s.next()
		if err != nil {
			return false
		}
		if _, err := jsonrpcwire.Decode(ev.data); errors.Is(err, jsonrpcwire.ErrTrailing) {
			return true
		}
	}
}

// FuzzConnVsSDK feeds the same body, answered to a tools/call as JSON or
// as an SSE stream (several events, comments, id:, retry:, event: names,
// multi-line data, cut into random partial reads), to our connection and
// to the go-sdk's StreamableClientTransport from the same httptest server:
// both deliver the same sequence of messages and end alike (answered,
// failed, or silent), except that a message with bytes after its JSON
// value fails ours (trailing).
func FuzzConnVsSDK(f *testing.F) {
	const answer = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	const ask = `{"jsonrpc":"2.0","id":"s1","method":"ping"}`
	for _, s := range []string{
		"event: message\ndata: " + answer + "\n\n",
		": comment\n\nretry: 5\n\ndata: " + note + "\n\ndata: " + ask + "\r\n\r\ndata: " + answer + "\n\n",
		"event: other\ndata: " + note + "\n\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n",
		"data: " + note + "\n\n",
		"id: 7\ndata: " + note + "\n\n",
		"data: " + answer,
		"data: {\n\n",
		"nocolon\n\n",
		"data:" + answer + "\r\n\r\n",
	} {
		f.Add([]byte(s), true, uint64(len(s)))
	}
	f.Add([]byte(answer), false, uint64(3))
	f.Add([]byte(" "+answer+"\n"), false, uint64(5))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}`), false, uint64(9))
	f.Add([]byte(`[]`), false, uint64(1))
	f.Fuzz(func(t *testing.T, body []byte, sse bool, seed uint64) {
		if len(body) > 8<<10 || loneCR(body) {
			return
		}
		srv := bodyServer(t, body, sse, seed)
		ours, err := New(egress.Default(), &Options{Resolver: &mapResolver{}, MaxRetries: -1, ReceiveCap: 1 << 20}).
			Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
		require.NoError(t, err)
		defer ours.CloseIdleConnections()
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		sdk := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: -1, MaxEventSize: 1 << 20}

		gotOurs, endOurs := exchange(t, ours)
		gotSDK, endSDK := exchange(t, sdk)
		if endOurs == "failed" && endSDK != "failed" && trailing(body, sse) {
			// The SDK decodes the first JSON value of a body or event and
			// ignores what follows it; the shared decoder refuses a
			// message with trailing bytes (jsonrpcwire.ErrTrailing).
			return
		}
		require.Equal(t, endSDK, endOurs, "ours %q, sdk %q", gotOurs, gotSDK)
		if endSDK != "failed" {
			// (A failure may drop what was queued before it, on both sides.)
			require.Equal(t, gotSDK, gotOurs)
		}
	})
}

// TestSSELineEnds: lines end at "\r\n", "\n" and a lone "\r" alike (the
// SSE specification), also when a "\r\n" is cut between two reads.
func TestSSELineEnds(t *testing.T) {
	const msg = `{"jsonrpc":"2.0","method":"x"}`
	for _, nl := range []string{"\n", "\r\n", "\r"} {
		stream := ": c" + nl + "event: message" + nl + "id: 3" + nl + "retry: 9" + nl + "data: " + msg + nl + "data: 2" + nl + nl + "data: b" + nl + nl
		for _, split := range []int{1, 2, 3, 7} {
			s := newSSEReader(&pieceReader{b: []byte(stream), n: split}, 1<<20)
			ev, err := s.next()
			require.NoError(t, err)
			require.Equal(t, streamEvent{name: "message", id: "3", retry: "9", data: []byte(msg + "\n2")}, ev, "%q split %d", nl, split)
			ev, err = s.next()
			require.NoError(t, err)
			require.Equal(t, "b", string(ev.data))
			_, err = s.next()
			require.Error(t, err)
			s.release()
		}
	}
	t.Run("cap", func(t *testing.T) {
		s := newSSEReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 64)
		defer s.release()
		_, err := s.next()
		require.ErrorIs(t, err, errSSETooLarge)
	})
	t.Run("malformed", func(t *testing.T) {
		s := newSSEReader(bytes.NewReader([]byte("data: 1\nnocolon\n\n")), 64)
		defer s.release()
		_, err := s.next()
		require.ErrorIs(t, err, errSSEMalformed)
	})
}

// pieceReader reads b n bytes at a time.
type pieceReader struct {
	b []byte
	n int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[n:]
	return n, nil
}
