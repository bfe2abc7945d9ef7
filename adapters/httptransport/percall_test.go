package httptransport

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
)

// TestSSEReaderAllocatesNothing: reading an event written as servers
// write a message (event: message, one data line) through a reader whose
// buffers are warm allocates nothing; the data is the SDK's.
func TestSSEReaderAllocatesNothing(t *testing.T) {
	answer := "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"n\":12}}\r\n\r\n"
	r := strings.NewReader(answer)
	s := newSSEReader(r, 1<<20)
	defer s.release()
	read := func() {
		r.Reset(answer)
		s.r, s.w, s.eof, s.err, s.skip = 0, 0, false, nil, false
		ev, err := s.next()
		if err != nil || ev.name != "message" || len(ev.data) == 0 {
			t.Fatal("event not read")
		}
	}
	read()
	assert.Zero(t, testing.AllocsPerRun(100, read))
	assert.Equal(t, sdkEvents([]byte(answer)), []string{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"n":12}}`})
}

// TestUnchangedHeaderIsShared: with no static header, no authenticator
// and no traceparent, an attempt is sent with the SDK's header as it is,
// without copying it (Request.Clone deep-copies it: 3 allocations and a map
// per request); a header mcpward must strip is still stripped, and the
// SDK's request is never written to.
func TestUnchangedHeaderIsShared(t *testing.T) {
	var got []http.Header
	srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", nil), nil)
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	rt := tr.HTTPClient.Transport.(*roundTripper)

	send := func(h http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/mcp", bytes.NewReader([]byte(`{}`)))
		require.NoError(t, err)
		req.Header = h
		before := h.Clone()
		resp, err := rt.RoundTrip(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, before, req.Header, "the SDK's header is not written to")
	}
	send(http.Header{"Accept": {"application/json, text/event-stream"}, "Mcp-Session-Id": {"abc"}})
	send(http.Header{"Accept": {"application/json"}, "Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "Tracestate": {"a=b"}})
	require.Len(t, got, 2)
	assert.Equal(t, "abc", got[0].Get("Mcp-Session-Id"))
	assert.Empty(t, got[1].Get("Traceparent"), "stripped")
	assert.Empty(t, got[1].Get("Tracestate"), "stripped")

	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/mcp", nil)
	require.NoError(t, err)
	req.Header = http.Header{"Accept": {"application/json"}, "Mcp-Session-Id": {"abc"}}
	assert.True(t, rt.keepsHeader(req, ""))
	assert.False(t, rt.keepsHeader(req, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
	req.Header.Set("Traceparent", "x")
	assert.False(t, rt.keepsHeader(req, ""))
	withStatic, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", map[string]string{"Authorization": "Bearer t"}), nil)
	require.NoError(t, err)
	defer withStatic.CloseIdleConnections()
	req.Header.Del("Traceparent")
	assert.False(t, withStatic.HTTPClient.Transport.(*roundTripper).keepsHeader(req, ""))
}

// TestRoundTripAllocations bounds what mcpward's round trip allocates per
// request beyond its base http.Transport, for a JSON answer read under the
// receive cap: the request's own context and its link to the caller's
// (linked.go), the shallow request copy, the capped body. It was 17 with
// the header copied on every request (Request.Clone).
func TestRoundTripAllocations(t *testing.T) {
	srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", nil), nil)
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	rt := tr.HTTPClient.Transport.(*roundTripper)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	allocs := func(send func(*http.Request) (*http.Response, error)) float64 {
		return testing.AllocsPerRun(200, func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp", nil)
			require.NoError(t, err)
			req.Header = http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}, "Mcp-Session-Id": {"abc"}}
			resp, err := send(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	base, ours := allocs(rt.base.RoundTrip), allocs(rt.RoundTrip)
	t.Logf("base %.1f, mcpward %.1f allocations per request", base, ours)
	assert.LessOrEqual(t, ours-base, 14.5) // 13 measured; the margin absorbs a rare redial
}
