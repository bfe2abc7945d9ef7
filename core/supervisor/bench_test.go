package supervisor

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// BenchmarkCall measures what the supervisor adds to one call: the raw
// scripted session against Server.Call on the same session, over both
// transports (stdio also tracks the in-flight call).
func BenchmarkCall(b *testing.B) {
	sc := script("1", "echo")
	sc.Call = func(_ context.Context, r ports.CallRequest) (ports.CallResult, error) {
		return ports.CallResult{Content: r.Arguments}, nil
	}
	req := ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"x":1}`)}
	ctx := context.Background()

	b.Run("session", func(b *testing.B) {
		c := portstest.NewConnector(sc)
		sess, err := c.Connect(ctx, ports.Target{ServerID: serverID}, ports.Signals{})
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sess.Call(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, kind := range []ports.TransportKind{ports.TransportHTTP, ports.TransportStdio} {
		b.Run("supervisor/"+string(kind), func(b *testing.B) {
			s := New(portstest.NewConnector(sc), ports.Target{ServerID: serverID, Kind: kind}, nil)
			defer s.Close()
			if err := s.Connect(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Call(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
