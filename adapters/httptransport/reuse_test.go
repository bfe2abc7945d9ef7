package httptransport

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
)

// TestSSEAnswersReuseConnections pins connection reuse for calls answered
// as SSE streams, each call under a context that ends when it returns (as
// the supervisor's call timeout does): the SDK drains a stream after the
// answer it waited for, and that drain must not be cut by the call's end,
// or every call costs a new TCP connection.
func TestSSEAnswersReuseConnections(t *testing.T) {
	for _, filtered := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "filtered"}[filtered]
		t.Run(name, func(t *testing.T) {
			srv := newTestServer(t, false, mcpHandler(newMCPServer(), nil))
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			if filtered {
				tr.SetInboundFilter(func(string, bool) bool { return true })
			}
			cs, err := connect(context.Background(), tr)
			require.NoError(t, err)
			defer cs.Close()
			before := srv.accepts()
			const calls = 40
			for range calls {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hi"}})
				cancel()
				require.NoError(t, err)
				require.False(t, res.IsError)
			}
			// Sequential calls need one connection (two when the standalone
			// stream's connection and a call's overlap at the start).
			require.LessOrEqual(t, srv.accepts()-before, int64(2), "new connections for %d sequential calls", calls)
		})
	}
}

// TestSSEReaderPooledBuffers: streams read one after another through
// readers sharing pooled buffers each get exactly their own events, and a
// buffer grown past maxPooledSSE is not kept.
func TestSSEReaderPooledBuffers(t *testing.T) {
	const reply = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	big := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("z", maxPooledSSE) + `"}}`
	for i, tc := range []struct {
		stream string
		want   []string
	}{
		{sseEvent(reply), []string{reply}},
		{sseEvent(big) + sseEvent(reply), []string{big, reply}},
		{sseEvent(reply), []string{reply}},
		{"data: " + reply, []string{reply}},
	} {
		s := newSSEReader(strings.NewReader(tc.stream), 4<<20)
		var got []string
		for {
			ev, err := s.next()
			if err != nil {
				require.ErrorIs(t, err, io.EOF, "stream %d", i)
				break
			}
			got = append(got, string(ev.data))
		}
		s.release()
		assert.Equal(t, tc.want, got, "stream %d", i)
		assert.Nil(t, s.bufs, "buffers given back")
	}
	b := ssePool.Get().(*sseBufs)
	assert.LessOrEqual(t, len(b.buf), maxPooledSSE)
	assert.GreaterOrEqual(t, len(b.buf), sseBufSize)
	assert.LessOrEqual(t, cap(b.data), maxPooledSSE)
	ssePool.Put(b)
}

// TestGracedDrainBounded: a POST's SSE answer that goes on without end is
// still read for a little after its context ends, but at most drainLimit
// bytes (plus one read) and for at most drainGrace, then the read fails.
func TestGracedDrainBounded(t *testing.T) {
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast", true: "slow"}[slow], func(t *testing.T) {
			srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				fl := w.(http.Flusher)
				line := ": " + strings.Repeat("k", 1024) + "\n\n"
				for {
					if _, err := io.WriteString(w, line); err != nil {
						return
					}
					fl.Flush()
					if slow {
						select {
						case <-r.Context().Done():
							return
						case <-time.After(time.Millisecond):
						}
					}
				}
			}))
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			ctx, cancel := context.WithCancel(context.Background())
			resp, err := post(ctx, tr, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			require.NoError(t, err)
			defer resp.Body.Close()
			_, err = io.CopyN(io.Discard, resp.Body, 8<<10)
			require.NoError(t, err)
			cancel()
			n, err := io.Copy(io.Discard, resp.Body)
			assert.Error(t, err, "the read ends in failure")
			assert.LessOrEqual(t, n, int64(drainLimit+64<<10), "bytes read after the end")
		})
	}
}
