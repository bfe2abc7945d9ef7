package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// telemetryWorld is a world with the example server approved as a project
// server, the secret in its env and the argument's text.
func telemetryWorld(t *testing.T, vars ...string) *world {
	t.Helper()
	bin := exampleBinary(t)
	w := newWorld(t, map[string]string{
		"ws/.mcp.json": `{"mcpServers": {
  "example": {"command": ` + jsonString(bin) + `, "env": {"API_KEY": "cnry-otel-env-5e", "TOKEN": "${OTEL_E2E_TOKEN}"}}
}}`,
		"ws/.git/config": gitConfig,
	}, append([]string{"OTEL_E2E_TOKEN=cnry-otel-var-9a"}, vars...)...)
	require.Equal(t, 0, w.run(t, "approve", "example").code)
	return w
}

var telemetryCall = []string{"--json", "call", "example", "echo", "--args", `{"text":"cnry-otel-arg-3c"}`}

// TestTelemetryConsole: OTEL_TRACES_EXPORTER=console writes the spans as
// JSON lines to stderr; stdout is exactly the --json document of a run
// without telemetry; no secret, argument or result is on stderr.
func TestTelemetryConsole(t *testing.T) {
	plain := telemetryWorld(t).run(t, telemetryCall...)
	require.Equal(t, 0, plain.code, plain.stderr)

	w := telemetryWorld(t, "OTEL_TRACES_EXPORTER=console", "OTEL_METRICS_EXPORTER=console")
	r := w.run(t, telemetryCall...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, plain.stdout, r.stdout, "stdout stays the --json document")
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))

	names := map[string]bool{}
	metrics := false
	sc := bufio.NewScanner(strings.NewReader(r.stderr))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var span struct {
			Name       string
			SpanKind   int
			Attributes []struct {
				Key   string
				Value struct{ Value any }
			}
		}
		line := sc.Bytes()
		if strings.Contains(string(line), "mcp.client.operation.duration") {
			metrics = true
			continue
		}
		if json.Unmarshal(line, &span) != nil || span.Name == "" {
			continue
		}
		names[span.Name] = true
		if span.Name == "tools/call echo" {
			attrs := map[string]any{}
			for _, a := range span.Attributes {
				attrs[a.Key] = a.Value.Value
			}
			assert.Equal(t, "tools/call", attrs["mcp.method.name"])
			assert.Equal(t, "echo", attrs["gen_ai.tool.name"])
			assert.Equal(t, "pipe", attrs["network.transport"])
		}
	}
	assert.True(t, names["tools/call echo"], "stderr holds the call's span: %v", names)
	assert.True(t, names["tools/list"], "and discovery's")
	assert.True(t, metrics, "and the metrics")
	assert.Contains(t, r.stdout, "cnry-otel-arg-3c", "the echo's result is on stdout, where it belongs")
	assert.False(t, strings.Contains(r.stderr, "cnry"), "no secret, argument or result in the telemetry on stderr")
}

// collector is a loopback OTLP/HTTP collector recording what it receives.
type collector struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string][]byte
}

func newCollector(t *testing.T) *collector {
	c := &collector{bodies: map[string][]byte{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.bodies[r.URL.Path] = append(c.bodies[r.URL.Path], b...)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) body(path string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.bodies[path])
}

// TestTelemetryOTLP: with an OTLP endpoint (a loopback httptest collector)
// the run exports its spans and metrics over OTLP/HTTP before it exits;
// stdout is unchanged and the exports carry no secret.
func TestTelemetryOTLP(t *testing.T) {
	c := newCollector(t)
	w := telemetryWorld(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL, "OTEL_SERVICE_NAME=otel-e2e")
	r := w.run(t, telemetryCall...)
	require.Equal(t, 0, r.code, r.stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.Empty(t, r.stderr)

	traces, metrics := c.body("/v1/traces"), c.body("/v1/metrics")
	assert.Contains(t, traces, "tools/call echo")
	assert.Contains(t, traces, "gen_ai.tool.name")
	assert.Contains(t, traces, "otel-e2e", "OTEL_SERVICE_NAME names the resource")
	assert.Contains(t, metrics, "mcp.client.operation.duration")
	assert.False(t, strings.Contains(traces+metrics, "cnry"), "no secret, argument or result in the export")
}

// TestTelemetryOff: no OTEL_* variable, or OTEL_SDK_DISABLED, or an
// exporter mcpward cannot honour: nothing is exported and the output is
// that of a plain run (a warning names the variable, never its value).
func TestTelemetryOff(t *testing.T) {
	c := newCollector(t)
	for _, tc := range []struct {
		name string
		vars []string
		warn string
	}{
		{"disabled", []string{"OTEL_SDK_DISABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT=" + c.URL}, ""},
		{"none", []string{"OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_EXPORTER_OTLP_ENDPOINT=" + c.URL}, ""},
		{"grpc", []string{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_ENDPOINT=" + c.URL}, "only the http/protobuf protocol is supported"},
		{"unknown", []string{"OTEL_TRACES_EXPORTER=cnry-otel-exporter", "OTEL_METRICS_EXPORTER=none"}, "OTEL_TRACES_EXPORTER: unknown exporter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := telemetryWorld(t, tc.vars...).run(t, telemetryCall...)
			require.Equal(t, 0, r.code, r.stderr)
			if tc.warn == "" {
				assert.Empty(t, r.stderr)
			} else {
				assert.Contains(t, r.stderr, tc.warn)
			}
			assert.False(t, strings.Contains(r.stderr, "cnry"))
			assert.Empty(t, c.body("/v1/traces")+c.body("/v1/metrics"))
		})
	}
}

// consoleSpan is a span as the console exporter writes it.
type consoleSpan struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ TraceID, SpanID string }
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
}

// consoleSpans are the spans in the console exporter's stderr.
func consoleSpans(t *testing.T, stderr string) []consoleSpan {
	t.Helper()
	var spans []consoleSpan
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var s consoleSpan
		if json.Unmarshal(sc.Bytes(), &s) == nil && s.Name != "" && s.SpanContext.SpanID != "" {
			spans = append(spans, s)
		}
	}
	return spans
}

// TestTelemetryRootSpan: with OTEL_TRACES_EXPORTER=console a run is one
// trace whose only root is the command's span ("mcpward call", its only
// attribute mcpward.command naming the command: no argument, flag or
// server name), every span of the library under it; stdout stays the
// --json document of a plain run. A failed command's span carries the
// failure's reason word as error.type.
func TestTelemetryRootSpan(t *testing.T) {
	plain := telemetryWorld(t).run(t, telemetryCall...)
	require.Equal(t, 0, plain.code, plain.stderr)
	for _, tc := range []struct {
		label   string
		args    []string
		name    string
		command string
		errType string
	}{
		{"call", telemetryCall, "mcpward call", "call", ""},
		{"tools", []string{"--json", "tools"}, "mcpward tools", "tools", ""},
		{"failed call", []string{"--json", "call", "example", "cnry-otel-nope", "--args", `{}`}, "mcpward call", "call", "unknown_tool"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			w := telemetryWorld(t, "OTEL_TRACES_EXPORTER=console")
			r := w.run(t, tc.args...)
			if tc.errType == "" {
				require.Equal(t, 0, r.code, r.stderr)
			} else {
				require.Equal(t, 1, r.code)
			}
			if tc.label == "call" {
				assert.Equal(t, plain.stdout, r.stdout, "stdout stays the --json document")
			}
			var doc any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "stdout is one JSON document")

			spans := consoleSpans(t, r.stderr)
			require.NotEmpty(t, spans)
			var roots []consoleSpan
			for _, s := range spans {
				if strings.Trim(s.Parent.SpanID, "0") == "" {
					roots = append(roots, s)
				}
			}
			require.Len(t, roots, 1, "one root")
			root := roots[0]
			assert.Equal(t, tc.name, root.Name)
			attrs := map[string]any{}
			for _, a := range root.Attributes {
				attrs[a.Key] = a.Value.Value
			}
			want := map[string]any{"mcpward.command": tc.command}
			if tc.errType != "" {
				want["error.type"] = tc.errType
			}
			assert.Equal(t, want, attrs)
			assert.Greater(t, len(spans), 1, "the library's spans too")
			for _, s := range spans {
				assert.Equal(t, root.SpanContext.TraceID, s.SpanContext.TraceID, "%s is in the command's trace", s.Name)
			}
			assert.False(t, strings.Contains(r.stderr, "cnry"), "no secret, argument or result in the telemetry on stderr")
		})
	}
}
