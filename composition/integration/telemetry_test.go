package integration_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/memory"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// telPeer is an in-process go-sdk server over httptest on 127.0.0.1 with
// an echo tool, a failing tool, a prompt and a resource; every result
// carries secret, and it records what it received.
type telPeer struct {
	*httptest.Server
	mu       sync.Mutex
	received []string // headers and bodies' arguments, as seen
	tps      []string // traceparent header of each tools/call POST
	metas    []any    // params._meta.traceparent of each tools/call
}

func newTelPeer(t *testing.T, secret string) *telPeer {
	t.Helper()
	p := &telPeer{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "tel", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		p.note(a.Text)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text + " result:" + secret}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("failed with %s and %s", a.Text, secret)
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			p.note(r.Params.Arguments["who"])
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi " + secret}}}}, nil
		})
	uri := "test://doc?token=" + secret
	srv.AddResource(&mcp.Resource{URI: uri, Name: "doc"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "doc " + secret}}}, nil
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				p.mu.Lock()
				p.metas = append(p.metas, req.GetParams().GetMeta()["traceparent"])
				p.mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.note(r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.URL.RawQuery)
		if r.Method == http.MethodPost {
			if tp := r.Header.Get("Traceparent"); tp != "" {
				p.mu.Lock()
				p.tps = append(p.tps, tp)
				p.mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *telPeer) note(s ...string) {
	p.mu.Lock()
	p.received = append(p.received, s...)
	p.mu.Unlock()
}

func (p *telPeer) saw(s string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.received {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

// recorders are the SDK's in-memory span recorder and manual metric
// reader behind the providers a test's Host gets.
type recorders struct {
	spans   *tracetest.SpanRecorder
	metrics *sdkmetric.ManualReader
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
}

func newRecorders(t *testing.T) *recorders {
	r := &recorders{spans: tracetest.NewSpanRecorder(), metrics: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.metrics))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = r.mp.Shutdown(context.Background())
	})
	return r
}

func (r *recorders) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.metrics.Collect(context.Background(), &rm))
	return rm
}

// histogram returns the data points of the float64 histogram name.
func histogram(rm metricdata.ResourceMetrics, name string) ([]metricdata.HistogramDataPoint[float64], string) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				h, _ := m.Data.(metricdata.Histogram[float64])
				return h.DataPoints, m.Unit
			}
		}
	}
	return nil, ""
}

func attrMap(kv []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, a := range kv {
		m[string(a.Key)] = a.Value.Emit()
	}
	return m
}

func span(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	names := make([]string, 0, len(spans))
	for _, s := range spans {
		names = append(names, s.Name())
	}
	require.Failf(t, "no span", "want %q among %q", name, names)
	return nil
}

func connectTel(t *testing.T, rec *recorders, cfg composition.Config, server string) *composition.Fleet {
	t.Helper()
	cfg.TracerProvider, cfg.MeterProvider = rec.tp, rec.mp
	h, cleanup, err := memory.Open(context.Background(), memory.Config{Config: cfg})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	src := []definition.Source{{Tier: ports.TierUser, Origin: "/home/u/mcp.json", Data: []byte(`{"mcpServers": {"tel": ` + server + `}}`)}}
	f := h.Connect(context.Background(), src, nil)
	t.Cleanup(func() { _ = f.Close() })
	s := f.Servers()
	require.Len(t, s, 1)
	require.Equal(t, composition.StateConnected, s[0].State, "reason %s", s[0].Reason)
	return f
}

// TestTelemetrySemconv checks the spans and metrics of a session by the
// OpenTelemetry semantic conventions for MCP (semconv v1.41.0): a client
// span per request named "{mcp.method.name} {target}", its attributes, a
// tool error's error.type, and the two client duration histograms.
func TestTelemetrySemconv(t *testing.T) {
	p := newTelPeer(t, "s3cr3t")
	rec := newRecorders(t)
	u, err := url.Parse(p.URL)
	require.NoError(t, err)
	f := connectTel(t, rec, composition.Config{}, `{"type": "http", "url": "`+p.URL+`/mcp"}`)
	version := f.Servers()[0].ProtocolVersion
	require.NotEmpty(t, version)
	ctx := context.Background()

	parent, root := rec.tp.Tracer("host").Start(ctx, "turn")
	_, err = f.CallServerTool(parent, "tel", "echo", json.RawMessage(`{"text":"x"}`))
	require.NoError(t, err)
	res, err := f.CallServerTool(ctx, "tel", "fail", json.RawMessage(`{"text":"x"}`))
	require.NoError(t, err, "a tool error is a result")
	require.True(t, res.IsError)
	root.End()

	spans := rec.spans.Ended()
	handshake := "initialize"
	if composition.ProtocolEra(version) == "modern" {
		handshake = "server/discover"
	}
	hs := span(t, spans, handshake)
	assert.Equal(t, trace.SpanKindClient, hs.SpanKind())
	assert.Equal(t, handshake, attrMap(hs.Attributes())["mcp.method.name"])
	span(t, spans, "tools/list")

	call := span(t, spans, "tools/call echo")
	assert.Equal(t, trace.SpanKindClient, call.SpanKind())
	assert.Equal(t, root.SpanContext().TraceID(), call.SpanContext().TraceID(), "the host's span is the call's parent")
	assert.Equal(t, root.SpanContext().SpanID(), call.Parent().SpanID())
	assert.Equal(t, map[string]string{
		"mcp.method.name":       "tools/call",
		"gen_ai.tool.name":      "echo",
		"gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version":  version,
		"network.transport":     "tcp",
		"server.address":        "127.0.0.1",
		"server.port":           u.Port(),
	}, attrMap(call.Attributes()))
	assert.Equal(t, codes.Unset, call.Status().Code)

	fail := span(t, spans, "tools/call fail")
	assert.Equal(t, composition.ErrorTypeToolError, attrMap(fail.Attributes())["error.type"])
	assert.Equal(t, codes.Error, fail.Status().Code)
	assert.Equal(t, composition.TelemetryScope, fail.InstrumentationScope().Name)
	assert.Equal(t, "https://opentelemetry.io/schemas/1.41.0", fail.InstrumentationScope().SchemaURL)

	ops, unit := histogram(rec.collect(t), "mcp.client.operation.duration")
	assert.Equal(t, "s", unit)
	byMethod := map[string]uint64{}
	for _, dp := range ops {
		m, _ := dp.Attributes.Value("mcp.method.name")
		byMethod[m.AsString()] += dp.Count
		if m.AsString() == "tools/call" {
			port, _ := dp.Attributes.Value("server.port")
			assert.Equal(t, u.Port(), strconv.FormatInt(port.AsInt64(), 10))
		}
	}
	assert.Equal(t, uint64(2), byMethod["tools/call"])
	assert.Equal(t, uint64(1), byMethod[handshake])
	assert.NotZero(t, byMethod["tools/list"])

	sess, _ := histogram(rec.collect(t), "mcp.client.session.duration")
	assert.Empty(t, sess, "a session's duration is recorded when it ends")
	require.NoError(t, f.Close())
	sess, unit = histogram(rec.collect(t), "mcp.client.session.duration")
	assert.Equal(t, "s", unit)
	require.Len(t, sess, 1)
	assert.Equal(t, uint64(1), sess[0].Count)
	v, _ := sess[0].Attributes.Value("mcp.protocol.version")
	assert.Equal(t, version, v.AsString())
}

// TestTelemetryTraceparent: the call's span travels as the traceparent of
// the tools/call request (header and params._meta) to an origin the host
// lists in TraceOrigins, and nowhere else.
func TestTelemetryTraceparent(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		t.Run(strconv.FormatBool(trusted), func(t *testing.T) {
			p := newTelPeer(t, "s")
			rec := newRecorders(t)
			var cfg composition.Config
			if trusted {
				u, _ := url.Parse(p.URL)
				cfg.HTTP = &httptransport.Options{TraceOrigins: []string{"http://" + u.Host}}
			}
			f := connectTel(t, rec, cfg, `{"type": "http", "url": "`+p.URL+`/mcp"}`)
			_, err := f.CallServerTool(context.Background(), "tel", "echo", json.RawMessage(`{"text":"x"}`))
			require.NoError(t, err)
			call := span(t, rec.spans.Ended(), "tools/call echo")
			p.mu.Lock()
			defer p.mu.Unlock()
			if !trusted {
				assert.Empty(t, p.tps)
				assert.Equal(t, []any{nil}, p.metas)
				return
			}
			want := fmt.Sprintf("00-%s-%s-01", call.SpanContext().TraceID(), call.SpanContext().SpanID())
			assert.Equal(t, []string{want}, p.tps, "only the tools/call carries it")
			assert.Equal(t, []any{want}, p.metas, "in params._meta too (SEP-414)")
		})
	}
}

// TestTelemetryCanary: a secret (fresh per run) in an environment value
// feeding a header, a literal header, the URL's query, a tool argument, a
// prompt argument, a resource URI, and in every result and error the
// server sends never appears in a span (name, attributes, events, links,
// status) or a metric (names, attributes) — while the server did receive
// it, so the test would see it if it leaked.
func TestTelemetryCanary(t *testing.T) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	canary := "canary" + hex.EncodeToString(b[:])
	env, lit, query, arg := canary+"env", canary+"lit", canary+"query", canary+"arg"

	p := newTelPeer(t, canary+"result")
	rec := newRecorders(t)
	cfg := composition.Config{Lookup: func(k string) (string, bool) {
		if k == "TEL_TOKEN" {
			return env, true
		}
		return "", false
	}}
	f := connectTel(t, rec, cfg, `{"type": "http", "url": "`+p.URL+`/mcp?k=`+query+`",
		"headers": {"Authorization": "Bearer ${TEL_TOKEN}", "X-Api-Key": "`+lit+`"}}`)
	ctx := context.Background()
	args := json.RawMessage(`{"text":"` + arg + `"}`)
	_, err := f.CallServerTool(ctx, "tel", "echo", args)
	require.NoError(t, err)
	_, err = f.CallServerTool(ctx, "tel", "fail", args)
	require.NoError(t, err)
	_, err = f.CallServerTool(ctx, "tel", "nope", args)
	require.Error(t, err)
	_, err = f.GetPrompt(ctx, "tel", "greet", map[string]string{"who": arg + "prompt"})
	require.NoError(t, err)
	_, err = f.ReadResource(ctx, "tel", "test://doc?token="+canary+"result")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	for _, s := range []string{env, lit, query, arg, arg + "prompt"} {
		require.True(t, p.saw(s), "the server received %s", s)
	}

	out := telemetryText(t, rec)
	require.Contains(t, out, "tools/call echo", "the walk saw the spans")
	for _, step := range []string{composition.SpanEvaluate, composition.SpanConnect, composition.SpanDiscovery} {
		require.Contains(t, out, step, "the walk saw mcpward's steps")
	}
	// Not require.NotContains: its message would print the telemetry.
	assert.False(t, strings.Contains(out, canary), "a secret, argument or result reached the telemetry")
}

// serveTel serves a Gateway of a telPeer (its results carrying secret)
// over httptest, with rec's providers.
func serveTel(t *testing.T, secret string) (*recorders, *httptest.Server) {
	t.Helper()
	p := newTelPeer(t, secret)
	rec := newRecorders(t)
	f := connectTel(t, rec, composition.Config{}, `{"type": "http", "url": "`+p.URL+`/mcp"}`)
	g := f.Gateway(&composition.GatewayOptions{Server: "tel"})
	t.Cleanup(g.Close)
	ts := httptest.NewServer(g.HTTPHandler("", ""))
	t.Cleanup(ts.Close)
	return rec, ts
}

// TestTelemetryServe: a Gateway's client requests get server spans named
// by the same conventions, children of the trace context the client sent
// in params._meta (SEP-414); the upstream call is a client span under the
// server span; mcp.server.operation.duration is recorded; the client's
// argument and the upstream's result appear in none of it.
func TestTelemetryServe(t *testing.T) {
	rec, ts := serveTel(t, "cnryserveresult")

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "cnryservearg"},
		Meta: mcp.Meta{"traceparent": tp}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"text": "cnryservearg"}})
	require.NoError(t, err)

	spans := rec.spans.Ended()
	var srv, up sdktrace.ReadOnlySpan
	for _, s := range spans {
		switch {
		case s.Name() == "tools/call echo" && s.SpanKind() == trace.SpanKindServer:
			srv = s
		case s.Name() == "tools/call echo" && s.SpanKind() == trace.SpanKindClient && s.Parent().IsValid():
			up = s
		}
	}
	require.NotNil(t, srv, "a server span for the client's call")
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", srv.SpanContext().TraceID().String(), "the client's trace")
	assert.Equal(t, "00f067aa0ba902b7", srv.Parent().SpanID().String())
	assert.True(t, srv.Parent().IsRemote())
	assert.Equal(t, map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool"},
		attrMap(srv.Attributes()))
	require.NotNil(t, up, "the upstream call is a client span")
	assert.Equal(t, srv.SpanContext().SpanID(), up.Parent().SpanID(), "under the server span")
	span(t, spans, "tools/call fail")
	var failSrv sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "tools/call fail" && s.SpanKind() == trace.SpanKindServer {
			failSrv = s
		}
	}
	require.NotNil(t, failSrv)
	assert.Equal(t, composition.ErrorTypeToolError, attrMap(failSrv.Attributes())["error.type"])
	assert.False(t, failSrv.Parent().IsValid(), "no trace context sent: a root span")

	// Over HTTP the traceparent header is accepted as well.
	const tp2 = "00-5bf92f3577b34da6a3ce929d0e0e4736-10f067aa0ba902b7-01"
	hc := &http.Client{Transport: headerRT{"Traceparent", tp2}}
	cs2, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs2.Close() })
	_, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "cnryservearg"}})
	require.NoError(t, err)
	var byHeader bool
	for _, s := range rec.spans.Ended() {
		if s.SpanKind() == trace.SpanKindServer && s.Name() == "tools/call echo" && s.Parent().SpanID().String() == "10f067aa0ba902b7" {
			byHeader = true
		}
	}
	assert.True(t, byHeader, "the header's trace context is the server span's parent")
	spans = rec.spans.Ended()

	ops, unit := histogram(rec.collect(t), "mcp.server.operation.duration")
	assert.Equal(t, "s", unit)
	var calls uint64
	for _, dp := range ops {
		if m, _ := dp.Attributes.Value("mcp.method.name"); m.AsString() == "tools/call" {
			calls += dp.Count
		}
	}
	assert.Equal(t, uint64(3), calls)

	var seen strings.Builder
	for _, s := range spans {
		fmt.Fprintln(&seen, s.Name(), s.Status().Description)
		for _, kv := range s.Attributes() {
			fmt.Fprintln(&seen, kv.Key, kv.Value.Emit())
		}
		for _, e := range s.Events() {
			fmt.Fprintln(&seen, e.Name, e.Attributes)
		}
	}
	assert.False(t, strings.Contains(seen.String(), "cnryserve"), "no argument or result in the spans")
}

// headerRT sets one request header on every request.
type headerRT struct{ k, v string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}

// telemetryText is every span (name, status, attributes, events, links,
// resource) and every metric (name, description, unit, data points'
// attributes) rec holds, as text to search for a canary.
func telemetryText(t *testing.T, rec *recorders) string {
	t.Helper()
	var seen strings.Builder
	spans := rec.spans.Ended()
	require.NotEmpty(t, spans)
	for _, s := range spans {
		fmt.Fprintln(&seen, s.Name(), s.Status().Description)
		kvs := append([]attribute.KeyValue(nil), s.Attributes()...)
		for _, e := range s.Events() {
			fmt.Fprintln(&seen, e.Name)
			kvs = append(kvs, e.Attributes...)
		}
		for _, l := range s.Links() {
			kvs = append(kvs, l.Attributes...)
		}
		kvs = append(kvs, s.Resource().Attributes()...)
		for _, kv := range kvs {
			fmt.Fprintln(&seen, kv.Key, kv.Value.Emit())
		}
	}
	rm := rec.collect(t)
	require.NotEmpty(t, rm.ScopeMetrics)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			fmt.Fprintln(&seen, m.Name, m.Description, m.Unit)
			h, ok := m.Data.(metricdata.Histogram[float64])
			require.True(t, ok, "%s is a float64 histogram", m.Name)
			for _, dp := range h.DataPoints {
				for _, kv := range dp.Attributes.ToSlice() {
					fmt.Fprintln(&seen, kv.Key, kv.Value.Emit())
				}
			}
		}
	}
	return seen.String()
}

// TestTelemetryServeSessions: mcp.server.session.duration (unit s) records
// one point per session a client opened with initialize, when it ends,
// with the negotiated mcp.protocol.version; a 2026-07-28 client's
// stateless requests open no session and record none (their operations
// are recorded as mcp.server.operation.duration); over stdio the session
// lasts until the client hangs up.
func TestTelemetryServeSessions(t *testing.T) {
	rec, ts := serveTel(t, "result")
	ctx := context.Background()
	sessions := func() (uint64, []metricdata.HistogramDataPoint[float64], string) {
		dps, unit := histogram(rec.collect(t), "mcp.server.session.duration")
		var n uint64
		for _, dp := range dps {
			n += dp.Count
		}
		return n, dps, unit
	}

	modern := mcp.NewClient(&mcp.Implementation{Name: "modern", Version: "1"}, nil)
	cs, err := modern.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil)
	require.NoError(t, err)
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion, "the SDK's default: stateless")
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	require.NoError(t, cs.Close())

	legacy := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	ls, err := legacy.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	_, err = ls.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	n, _, _ := sessions()
	assert.Zero(t, n, "the legacy session is open, and the modern client opened none")
	require.NoError(t, ls.Close()) // DELETE ends the session

	require.Eventually(t, func() bool { n, _, _ := sessions(); return n > 0 }, 10*time.Second, 10*time.Millisecond)
	n, dps, unit := sessions()
	assert.Equal(t, uint64(1), n, "one session: the legacy client's")
	assert.Equal(t, "s", unit)
	require.Len(t, dps, 1)
	assert.Equal(t, map[string]string{"mcp.protocol.version": "2025-11-25"}, attrMap(dps[0].Attributes.ToSlice()))
	ops, _ := histogram(rec.collect(t), "mcp.server.operation.duration")
	var calls uint64
	for _, dp := range ops {
		if m, _ := dp.Attributes.Value("mcp.method.name"); m.AsString() == "tools/call" {
			calls += dp.Count
		}
	}
	assert.Equal(t, uint64(2), calls, "both clients' calls are operations")

	// Over stdio: a session from initialize to the client's hang-up.
	p := newTelPeer(t, "result")
	srec := newRecorders(t)
	f := connectTel(t, srec, composition.Config{}, `{"type": "http", "url": "`+p.URL+`/mcp"}`)
	g := f.Gateway(&composition.GatewayOptions{Server: "tel"})
	t.Cleanup(g.Close)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- g.ServeStdio(sctx, inR, outW) }()
	ss, err := mcp.NewClient(&mcp.Implementation{Name: "stdio", Version: "1"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	_, err = ss.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	require.NoError(t, ss.Close())
	<-served
	require.Eventually(t, func() bool {
		dps, _ := histogram(srec.collect(t), "mcp.server.session.duration")
		return len(dps) == 1 && dps[0].Count == 1
	}, 10*time.Second, 10*time.Millisecond, "one stdio session recorded")
}

// TestTelemetryNoSessionID: the invariant behind leaving semconv's
// mcp.session.id out. A legacy session's Mcp-Session-Id is a header value
// that carries the session (whoever holds it speaks as this client), and no
// header value becomes telemetry. A legacy-only peer (server/discover
// answered "method not found", so the session falls back to initialize)
// hands out a session id; no span, event or metric of the session carries
// it.
func TestTelemetryNoSessionID(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tel", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var ids []string
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "read", http.StatusBadRequest)
				return
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "server/discover" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		h.ServeHTTP(w, r)
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			mu.Lock()
			ids = append(ids, id)
			mu.Unlock()
		}
	}))
	t.Cleanup(peer.Close)

	rec := newRecorders(t)
	f := connectTel(t, rec, composition.Config{}, `{"type": "http", "url": "`+peer.URL+`/mcp"}`)
	require.NotEqual(t, "2026-07-28", f.Servers()[0].ProtocolVersion, "the peer speaks only the legacy era")
	_, err := f.CallServerTool(context.Background(), "tel", "echo", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, ids, "the peer handed out a session id")
	out := telemetryText(t, rec)
	require.Contains(t, out, "tools/call echo", "the walk saw the spans")
	for _, id := range ids {
		// Not require.NotContains: its message would print the telemetry.
		assert.False(t, strings.Contains(out, id), "the session id reached the telemetry")
	}
	assert.False(t, strings.Contains(out, "mcp.session.id"), "mcp.session.id is never recorded")
}
