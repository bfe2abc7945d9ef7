package composition

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports/portstest"
)

// TestTelemetryNil: without providers there is no telemetry, and the
// connector is the one given (nothing wraps a session, so a call runs
// exactly the code it ran before).
func TestTelemetryNil(t *testing.T) {
	tel := newTelemetry(Config{})
	assert.Nil(t, tel)
	c := portstest.NewConnector(portstest.SessionScript{})
	assert.Same(t, c, tel.connector(c))
	assert.Nil(t, tel.observer())
	assert.Nil(t, tel.step(), "no supervisor step hook")
	ctx := context.Background()
	ectx, span := tel.evaluateSpan(ctx)
	assert.Nil(t, span)
	assert.Equal(t, ctx, ectx)
	assert.Nil(t, newTelemetry(Config{MeterProvider: noop.NewMeterProvider()}).step(), "metrics only: no step spans")

	on := newTelemetry(Config{TracerProvider: tracenoop.NewTracerProvider()})
	require.NotNil(t, on)
	assert.False(t, on.metrics)
	assert.IsType(t, &tracedConnector{}, on.connector(c))
	assert.True(t, newTelemetry(Config{MeterProvider: noop.NewMeterProvider()}).metrics)
}

// TestErrorType: error.type is a refusal's reason word when it is one,
// never an error's text.
func TestErrorType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{refusal.New(refusal.Transient, "call_timeout", "s"), "call_timeout"},
		{errors.New("dial tcp 10.0.0.1: secret"), "_OTHER"},
		{&refusal.Error{Class: refusal.Protocol, Reason: "Bad Reason"}, "_OTHER"},
		{&refusal.Error{Class: refusal.Protocol, Reason: strings.Repeat("a", 65)}, "_OTHER"},
		{&refusal.Error{Class: refusal.Protocol}, "_OTHER"},
		{nil, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ErrorType(tt.err))
	}
}

// FuzzParseTraceparent: a client's traceparent (serve) is hostile bytes:
// parseTraceparent never panics, accepts exactly what
// httptransport.ValidTraceparent accepts, and an accepted one written back
// by traceparentOf is the input with its flags cut to the sampled bit.
func FuzzParseTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff")
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	f.Add("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01")
	f.Add("")
	f.Fuzz(func(t *testing.T, tp string) {
		sc, ok := parseTraceparent(tp)
		if ok != httptransport.ValidTraceparent(tp) {
			t.Fatalf("accepted %v, ValidTraceparent %v", ok, !ok)
		}
		if !ok {
			return
		}
		if !sc.IsValid() || !sc.IsRemote() {
			t.Fatal("an accepted traceparent gives a valid remote span context")
		}
		got := traceparentOf(sc)
		want := tp[:53] + "00"
		if sc.IsSampled() {
			want = tp[:53] + "01"
		}
		if got != want {
			t.Fatalf("written back as %q, want %q", got, want)
		}
	})
}
