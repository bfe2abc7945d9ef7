package ports_test

import (
	"context"
	"testing"

	"github.com/mcpward/mcpward/ports"
)

func TestTraceparentContext(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := context.Background()
	if got := ports.Traceparent(ctx); got != "" {
		t.Fatalf("empty context carries %q", got)
	}
	with := ports.WithTraceparent(ctx, tp)
	if got := ports.Traceparent(with); got != tp {
		t.Fatalf("got %q, want the value put in", got)
	}
	if got := ports.Traceparent(ctx); got != "" {
		t.Fatalf("parent context changed: %q", got)
	}
}
