package httptransport

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestMCPSessionThroughTransport(t *testing.T) {
	tests := []struct {
		name string
		tls  bool
	}{
		{name: "http loopback, default policy", tls: false},
		{name: "https loopback, policy admitting 127/8, pinned root", tls: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			srv := newTestServer(t, tc.tls, mcpHandler(newMCPServer(), nil))

			policy := egress.Default()
			opts := safeOptions()
			if tc.tls {
				var err error
				policy, err = egress.New(&egress.Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
				require.NoError(t, err)
				pool := x509.NewCertPool()
				pool.AddCert(srv.Certificate())
				opts.TLSConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
				opts.TLSConfig.RootCAs = pool
			}
			auth := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer auth-token"}}, 1)
			static := map[string]string{"X-Static": "static-value", "Authorization": "Bearer static-token"}
			staticCopy := map[string]string{"X-Static": "static-value", "Authorization": "Bearer static-token"}

			tr, err := New(policy, opts).Transport(ctx, httpTarget("srv", srv.URL+"/mcp", static), auth)
			require.NoError(t, err)
			closeIdle(t, tr)
			require.Equal(t, int64(DefaultReceiveCap), tr.rt.cap)

			cs, err := connect(ctx, tr)
			require.NoError(t, err)
			lt, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			var names []string
			for _, tool := range lt.Tools {
				names = append(names, tool.Name)
			}
			assert.ElementsMatch(t, []string{"echo", "block"}, names)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hi"}})
			require.NoError(t, err)
			require.Len(t, res.Content, 1)
			assert.Equal(t, "hi", res.Content[0].(*mcp.TextContent).Text)
			require.NoError(t, cs.Close())

			reqs := srv.requests()
			require.NotEmpty(t, reqs)
			methods := map[string]bool{}
			for _, r := range reqs {
				methods[r.Method] = true
				// Every request carries the static header and the
				// authenticator's Authorization, which beat the static one.
				assert.Equal(t, []string{"static-value"}, r.Header.Values("X-Static"), r.Method)
				assert.Equal(t, []string{"Bearer auth-token"}, r.Header.Values("Authorization"), r.Method)
				assert.Empty(t, r.Header.Get("Traceparent"), r.Method)
			}
			assert.True(t, methods[http.MethodPost])
			assert.True(t, methods[http.MethodDelete], "session DELETE authenticated too")
			// SDK-owned headers are the SDK's.
			last := reqs[len(reqs)-1]
			assert.Equal(t, "2025-11-25", last.Header.Get("Mcp-Protocol-Version"))
			assert.NotEmpty(t, last.Header.Get("Mcp-Session-Id"))
			assert.Len(t, auth.Requests(), len(reqs), "one Headers call per request")
			assert.Equal(t, staticCopy, static, "the definition's map is not modified")
		})
	}
}

func TestAdmissionFirstConstructsNothing(t *testing.T) {
	srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	deny := refusal.New(refusal.Refused, "address_refused", "")
	tests := []struct {
		name   string
		policy ports.EgressPolicy
		target ports.Target
		class  refusal.Class
		reason string
	}{
		{name: "policy refuses", policy: portstest.DenyAllEgress(deny), target: httpTarget("s", srv.URL, nil), class: refusal.Refused, reason: "address_refused"},
		{name: "policy refuses with a plain error", policy: portstest.DenyAllEgress(fmt.Errorf("refused %s", srv.URL)), target: httpTarget("s", srv.URL, nil), class: refusal.Refused, reason: ReasonEgressRefused},
		{name: "default policy: http to private space", policy: egress.Default(), target: httpTarget("s", "http://10.0.0.1:80/mcp", nil), class: refusal.Refused, reason: egress.ReasonHTTPNotLoopback},
		{name: "default policy: userinfo", policy: egress.Default(), target: httpTarget("s", "http://u:p@"+srv.Listener.Addr().String(), nil), class: refusal.Refused, reason: egress.ReasonUserinfoRefused},
		{name: "permissive policy: userinfo still refused", policy: portstest.AllowAllEgress(), target: httpTarget("s", "http://u:p@"+srv.Listener.Addr().String(), nil), class: refusal.Refused, reason: ReasonUserinfoRefused},
		{name: "permissive policy: ftp refused", policy: portstest.AllowAllEgress(), target: httpTarget("s", "ftp://"+srv.Listener.Addr().String(), nil), class: refusal.Refused, reason: "scheme_refused"},
		{name: "stdio target", policy: portstest.AllowAllEgress(), target: ports.Target{ServerID: "s", Kind: ports.TransportStdio, URL: srv.URL}, class: refusal.Config, reason: ReasonKindMismatch},
		{name: "relative url", policy: portstest.AllowAllEgress(), target: httpTarget("s", "/mcp", nil), class: refusal.Config, reason: ReasonURLInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := New(tc.policy, safeOptions()).Transport(context.Background(), tc.target, nil)
			assert.Nil(t, tr)
			r := requireRefusal(t, err, tc.class, tc.reason)
			assert.Equal(t, "s", r.Server)
			assert.NotContains(t, err.Error(), "/mcp")
			assert.NotContains(t, err.Error(), "u:p")
		})
	}
	assert.Zero(t, srv.accepts(), "no connection for a refused target")
}

func TestDialTimeAdmission(t *testing.T) {
	srv := newTestServer(t, false, mcpHandler(newMCPServer(), nil))
	port := srv.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	tests := []struct {
		name    string
		url     string
		resolve map[string][]netip.Addr
		reason  string
	}{
		{
			name:    "public-looking name resolving to loopback over https",
			url:     fmt.Sprintf("https://public.example:%d/mcp", port),
			resolve: map[string][]netip.Addr{"public.example": {netip.MustParseAddr("127.0.0.1")}},
			reason:  egress.ReasonAddressRefused,
		},
		{
			name:    "localhost resolving to private space over http",
			url:     fmt.Sprintf("http://localhost:%d/mcp", port),
			resolve: map[string][]netip.Addr{"localhost": {netip.MustParseAddr("10.1.2.3")}},
			reason:  egress.ReasonHTTPNotLoopback,
		},
		{
			name:    "name resolving to metadata over https",
			url:     fmt.Sprintf("https://rebind.example:%d/mcp", port),
			resolve: map[string][]netip.Addr{"rebind.example": {netip.MustParseAddr("169.254.169.254")}},
			reason:  egress.ReasonMetadataRefused,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res := &mapResolver{m: tc.resolve}
			dialer := &countingDialer{}
			tr, err := New(egress.Default(), &Options{Resolver: res, Dialer: dialer, MaxRetries: -1}).
				Transport(ctx, httpTarget("s", tc.url, nil), nil)
			require.NoError(t, err, "the URL itself is admitted")
			closeIdle(t, tr)
			_, err = connect(ctx, tr)
			requireRefusal(t, err, refusal.Refused, tc.reason)
			assert.NotContains(t, Classify(err, "s", "").Error(), "/mcp")
			assert.Positive(t, res.calls.Load(), "the injected resolver was asked")
			assert.Zero(t, dialer.n.Load(), "nothing dialled")
		})
	}
	assert.Zero(t, srv.accepts())
}

func TestDialControlChecksEveryDialledAddress(t *testing.T) {
	// With a *net.Dialer, the Control hook admits the address once more at
	// connect time: a policy that refuses only the second question proves
	// the hook runs.
	srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	policy := portstest.AllowAllEgress()
	var n int
	var mu sync.Mutex
	policy.Addr = func(string, netip.AddrPort) error {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n == 2 {
			return refusal.New(refusal.Refused, "address_refused", "")
		}
		return nil
	}
	tr, err := New(policy, &Options{Resolver: &mapResolver{}, Dialer: &netDialer}).Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	_, err = post(context.Background(), tr, `{}`)
	requireRefusal(t, err, refusal.Refused, "address_refused")
	assert.Zero(t, srv.accepts())
	require.Len(t, policy.Addrs(), 2)
	assert.Equal(t, "http", policy.Addrs()[1].Scheme)
}

func TestRedirectRefused(t *testing.T) {
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusFound, http.StatusPermanentRedirect, http.StatusMultipleChoices} {
		for _, same := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d same-origin=%v", code, same), func(t *testing.T) {
				target := newTestServer(t, false, mcpHandler(newMCPServer(), nil))
				var redir *testServer
				redir = newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/elsewhere" {
						w.WriteHeader(http.StatusOK)
						return
					}
					loc := target.URL + "/mcp"
					if same {
						loc = redir.URL + "/elsewhere"
					}
					w.Header().Set("Location", loc)
					w.WriteHeader(code)
				}))
				tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(),
					httpTarget("s", redir.URL+"/mcp", map[string]string{"X-Static": "s"}), portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer x"}}, 1))
				require.NoError(t, err)
				closeIdle(t, tr)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, err = connect(ctx, tr)
				requireRefusal(t, err, refusal.Refused, ReasonRedirectRefused)
				assert.Zero(t, target.accepts(), "redirect target received nothing")
				assert.Len(t, redir.requests(), 1, "the redirect was not followed, even to the same origin")
			})
		}
	}
}

func TestOriginMismatch(t *testing.T) {
	a := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	b := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", a.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	for _, u := range []string{b.URL, strings.Replace(a.URL, "http:", "https:", 1), "http://u:p@" + a.Listener.Addr().String()} {
		req, err := http.NewRequest(http.MethodGet, u+"/x?secret=1", nil)
		require.NoError(t, err)
		_, err = tr.HTTPClient.Transport.RoundTrip(req)
		r := requireRefusal(t, err, refusal.Refused, ReasonOriginMismatch)
		assert.Equal(t, originOf(mustURL(t, a.URL)), r.Origin)
		assert.NotContains(t, err.Error(), "secret")
	}
	assert.Zero(t, a.accepts())
	assert.Zero(t, b.accepts())
}

func TestStaticHeadersChecked(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string]string
		reason  string
	}{
		{name: "session id", headers: map[string]string{"Mcp-Session-Id": "x"}, reason: ReasonReservedHeader},
		{name: "any Mcp- header", headers: map[string]string{"mcp-method": "x"}, reason: ReasonReservedHeader},
		{name: "protocol version", headers: map[string]string{"MCP-PROTOCOL-VERSION": "x"}, reason: ReasonReservedHeader},
		{name: "content type", headers: map[string]string{"content-type": "text/plain"}, reason: ReasonReservedHeader},
		{name: "accept", headers: map[string]string{"Accept": "*/*"}, reason: ReasonReservedHeader},
		{name: "last event id", headers: map[string]string{"Last-Event-ID": "1"}, reason: ReasonReservedHeader},
		{name: "traceparent", headers: map[string]string{"traceparent": "00-" + strings.Repeat("1", 32) + "-" + strings.Repeat("1", 16) + "-01"}, reason: ReasonReservedHeader},
		{name: "host", headers: map[string]string{"Host": "evil.example"}, reason: ReasonReservedHeader},
		{name: "transfer encoding", headers: map[string]string{"Transfer-Encoding": "chunked"}, reason: ReasonReservedHeader},
		{name: "space in name", headers: map[string]string{"X Bad": "v"}, reason: ReasonHeaderInvalid},
		{name: "empty name", headers: map[string]string{"": "v"}, reason: ReasonHeaderInvalid},
		{name: "CRLF in value", headers: map[string]string{"X-Ok": "v\r\nX-Injected: 1"}, reason: ReasonHeaderInvalid},
		{name: "NUL in value", headers: map[string]string{"X-Ok": "v\x00"}, reason: ReasonHeaderInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := New(portstest.AllowAllEgress(), safeOptions()).Transport(context.Background(), httpTarget("s", "http://127.0.0.1:1/mcp", tc.headers), nil)
			assert.Nil(t, tr)
			requireRefusal(t, err, refusal.Config, tc.reason)
		})
	}
}

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		name   string
		method string
		status int
		ctype  string
		class  refusal.Class
		pass   bool
	}{
		{name: "500 is transient", method: http.MethodPost, status: 500, class: refusal.Transient},
		{name: "503 is transient", method: http.MethodPost, status: 503, class: refusal.Transient},
		{name: "429 is transient", method: http.MethodPost, status: 429, class: refusal.Transient},
		{name: "400 text is refused", method: http.MethodPost, status: 400, ctype: "text/plain", class: refusal.Refused},
		{name: "404 without session is refused", method: http.MethodPost, status: 404, class: refusal.Refused},
		{name: "400 json-rpc error passes to the SDK", method: http.MethodPost, status: 400, ctype: "application/json", pass: true},
		{name: "405 on GET passes to the SDK", method: http.MethodGet, status: 405, pass: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"body-text-canary"}}`)
			}))
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			req, err := http.NewRequest(tc.method, srv.URL, nil)
			require.NoError(t, err)
			resp, err := tr.HTTPClient.Do(req)
			if tc.pass {
				require.NoError(t, err)
				defer resp.Body.Close()
				assert.Equal(t, tc.status, resp.StatusCode)
				return
			}
			r := requireRefusal(t, err, tc.class, ReasonHTTPStatus)
			assert.Equal(t, "s", r.Server)
			var se *StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.status, se.Status)
			assert.NotContains(t, err.Error(), "body-text-canary")
		})
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

func TestReceiveCap(t *testing.T) {
	const capBytes = 1 << 20
	chunk := []byte(strings.Repeat("x", 64<<10))
	flood := func(declare bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if declare {
				w.Header().Set("Content-Length", fmt.Sprint(100<<20))
			}
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"pad":"`)
			for i := 0; i < (100<<20)/len(chunk); i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
	}
	tests := []struct {
		name    string
		declare bool
	}{
		{name: "chunked 100 MB body", declare: false},
		{name: "declared 100 MB body", declare: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t, false, flood(tc.declare))
			tr, err := New(egress.Default(), &Options{Resolver: &mapResolver{}, ReceiveCap: capBytes}).
				Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			require.Equal(t, int64(capBytes), tr.rt.cap)

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = post(context.Background(), tr, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			runtime.ReadMemStats(&after)
			r := requireRefusal(t, err, refusal.Protocol, ReasonReceiveCap)
			assert.Contains(t, r.Detail, "1048576")
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(24<<20), "memory stays bounded by the cap")
		})
	}
}

func TestReceiveCapThroughSession(t *testing.T) {
	s := newMCPServer()
	mcp.AddTool(s, &mcp.Tool{Name: "big"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("y", 256<<10)}}}, nil, nil
	})
	for _, jsonResp := range []bool{true, false} {
		t.Run(fmt.Sprintf("json-response=%v", jsonResp), func(t *testing.T) {
			srv := newTestServer(t, false, mcpHandler(s, &mcp.StreamableHTTPOptions{JSONResponse: jsonResp}))
			tr, err := New(egress.Default(), &Options{Resolver: &mapResolver{}, ReceiveCap: 64 << 10}).
				Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cs, err := connect(ctx, tr)
			require.NoError(t, err)
			defer cs.Close()
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "small"}})
			require.NoError(t, err, "a small reply passes")
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "big"})
			require.Error(t, err, "a reply over the cap fails")
			// A JSON body over the cap, or an SSE event over it, is the
			// transport's typed refusal, which Classify returns.
			requireRefusal(t, err, refusal.Protocol, ReasonReceiveCap)
			r := Classify(err, "s", "")
			assert.Equal(t, refusal.Protocol, r.Class)
			assert.Equal(t, ReasonReceiveCap, r.Reason)
		})
	}
}

func TestEndlessSSEEndsOnCancel(t *testing.T) {
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
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	}))
	tr, err := New(egress.Default(), &Options{Resolver: &mapResolver{}, ReceiveCap: 4 << 10}).
		Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := tr.HTTPClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	// The body cap does not apply to SSE: the stream is read past it.
	n, err := io.CopyN(io.Discard, resp.Body, 64<<10)
	require.NoError(t, err)
	require.EqualValues(t, 64<<10, n)
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		assert.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not end the stream")
	}
}
