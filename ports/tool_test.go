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

func TestProgressContext(t *testing.T) {
	ctx := context.Background()
	if ports.ProgressFunc(ctx) != nil {
		t.Fatal("empty context carries a progress callback")
	}
	var got []ports.Progress
	with := ports.WithProgress(ctx, func(p ports.Progress) { got = append(got, p) })
	f := ports.ProgressFunc(with)
	if f == nil {
		t.Fatal("no callback from the context it was put into")
	}
	f(ports.Progress{Progress: 1, Total: 2, Message: "half"})
	if len(got) != 1 || got[0] != (ports.Progress{Progress: 1, Total: 2, Message: "half"}) {
		t.Fatalf("callback got %v", got)
	}
	if ports.ProgressFunc(ctx) != nil {
		t.Fatal("parent context changed")
	}
	if ports.ProgressFunc(ports.WithProgress(ctx, nil)) != nil {
		t.Fatal("a nil callback is not nil")
	}
}
