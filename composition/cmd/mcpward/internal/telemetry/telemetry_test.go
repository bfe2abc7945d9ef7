package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpward/mcpward/core/refusal"
)

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExporters(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		traces  []string
		metrics []string
		warn    string
	}{
		{"nothing set: off, no surprise connection", nil, nil, nil, ""},
		{"endpoint alone means otlp", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"}, []string{"otlp"}, []string{"otlp"}, ""},
		{"per-signal endpoint", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces"}, []string{"otlp"}, nil, ""},
		{"console and otlp, deduplicated", []string{"OTEL_TRACES_EXPORTER= Console,otlp,console"}, []string{"console", "otlp"}, nil, ""},
		{"none wins", []string{"OTEL_TRACES_EXPORTER=console,none", "OTEL_EXPORTER_OTLP_ENDPOINT=x"}, nil, []string{"otlp"}, ""},
		{"grpc is not linked", []string{"OTEL_METRICS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}, nil, nil, "OTEL_METRICS_EXPORTER: only the http/protobuf protocol"},
		{"per-signal protocol wins", []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf"}, []string{"otlp"}, nil, ""},
		{"unknown exporter, value not echoed", []string{"OTEL_TRACES_EXPORTER=zipkin-s3cr3t"}, nil, nil, "OTEL_TRACES_EXPORTER: unknown exporter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			get := func(k string) string { v, _ := env(tt.env...)(k); return strings.TrimSpace(v) }
			var w strings.Builder
			warn := func(f string, a ...any) { fmt.Fprintf(&w, f, a...) }
			assert.Equal(t, tt.traces, exporters(get, "TRACES", warn))
			assert.Equal(t, tt.metrics, exporters(get, "METRICS", warn))
			if tt.warn == "" {
				assert.Empty(t, w.String())
			} else {
				assert.Contains(t, w.String(), tt.warn)
			}
			assert.NotContains(t, w.String(), "s3cr3t")
		})
	}
}

// TestNewOff: no variable, or OTEL_SDK_DISABLED, gives no provider and
// writes nothing.
func TestNewOff(t *testing.T) {
	for _, e := range [][]string{nil, {"OTEL_SDK_DISABLED=true", "OTEL_TRACES_EXPORTER=console"}} {
		var stderr bytes.Buffer
		p := New(context.Background(), env(e...), &stderr, "v")
		assert.Nil(t, p.TracerProvider)
		assert.Nil(t, p.MeterProvider)
		require.NoError(t, p.Shutdown(context.Background()))
		assert.Empty(t, stderr.String())
	}
}

// TestNewConsole: console spans are JSON lines on the writer given as
// stderr, flushed by Shutdown.
func TestNewConsole(t *testing.T) {
	var stderr bytes.Buffer
	p := New(context.Background(), env("OTEL_TRACES_EXPORTER=console"), &stderr, "v1")
	require.NotNil(t, p.TracerProvider)
	assert.Nil(t, p.MeterProvider)
	_, span := p.TracerProvider.Tracer("t").Start(context.Background(), "tools/call x")
	span.End()
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Contains(t, stderr.String(), `"Name":"tools/call x"`)
	assert.Contains(t, stderr.String(), `"service.name"`)
}

// TestStartCommand: no provider, no span and the context unchanged; with
// one, an INTERNAL span named by the command path whose only attribute
// names the command, plus error.type (a reason word, or _OTHER for an
// error's text) when the command failed.
func TestStartCommand(t *testing.T) {
	ctx := context.Background()
	got, end := StartCommand(ctx, nil, "mcpward list")
	assert.Equal(t, ctx, got)
	end(errors.New("nothing recorded"))

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	for _, tc := range []struct {
		path string
		err  error
		want map[string]string
	}{
		{"mcpward list", nil, map[string]string{AttrCommand: "list"}},
		{"mcpward egress check", refusal.New(refusal.Refused, "egress_refused", "s"), map[string]string{AttrCommand: "egress check", "error.type": "egress_refused"}},
		{"mcpward", errors.New("unknown command cnry-typed"), map[string]string{AttrCommand: "", "error.type": "_OTHER"}},
	} {
		sctx, end := StartCommand(ctx, tp, tc.path)
		require.True(t, trace.SpanContextFromContext(sctx).IsValid(), "the library's spans get a parent")
		end(tc.err)
		spans := rec.Ended()
		s := spans[len(spans)-1]
		assert.Equal(t, tc.path, s.Name())
		assert.Equal(t, trace.SpanKindInternal, s.SpanKind())
		assert.False(t, s.Parent().IsValid(), "a root")
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		assert.Equal(t, tc.want, attrs)
		assert.NotContains(t, s.Status().Description, "cnry")
	}
}
