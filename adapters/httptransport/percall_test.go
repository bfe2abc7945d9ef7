package httptransport

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
)

// TestSSEKeepAllocatesNothing: judging an event written on one data line,
// as servers write messages, copies nothing (it used to join the data
// lines into a new buffer and split the event with an allocating
// iterator); an event spread over several data lines is judged the same
// way as the SDK reads it.
func TestSSEKeepAllocatesNothing(t *testing.T) {
	f := &sseFilter{admit: func(string, bool) bool { return false }}
	answer := []byte("event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"n\":12}}\r\n\r\n")
	require.True(t, f.keep(answer), "a response is never refused")
	assert.Zero(t, testing.AllocsPerRun(100, func() { f.keep(answer) }))

	for _, ev := range []string{
		"data: {\"method\":\"notifications/message\"}\n\n",
		"data: {\"method\":\ndata: \"notifications/message\"}\n\n",
		"data: {\"method\"\ndata: :\ndata: \"x\"}\n\n",
		"event: message\ndata:{\"id\":1,\ndata: \"method\":\"ping\"}\n\n",
	} {
		assert.False(t, f.keep([]byte(ev)), "refused: %q", ev)
	}
	for _, ev := range []string{
		"event: other\ndata: {\"method\":\"x\"}\n\n", // the SDK skips it
		"data: {\"id\":1,\ndata: \"result\":{}}\n\n",
		": comment\n\n",
	} {
		assert.True(t, f.keep([]byte(ev)), "passed: %q", ev)
	}
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
	defer tr.HTTPClient.CloseIdleConnections()
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
	defer withStatic.HTTPClient.CloseIdleConnections()
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
	defer tr.HTTPClient.CloseIdleConnections()
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
