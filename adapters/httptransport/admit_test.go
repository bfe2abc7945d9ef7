package httptransport

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Admit is the URL half of Transport's admission: pure, no resolver.
func TestFactoryAdmit(t *testing.T) {
	f := New(egress.Default(), &Options{Resolver: &mapResolver{}})
	tests := []struct {
		url    string
		ok     bool
		class  refusal.Class
		reason string
	}{
		{url: "https://mcp.example.com/mcp", ok: true},
		{url: "http://127.0.0.1:8080/mcp", ok: true},
		{url: "http://example.com/mcp", class: refusal.Refused, reason: "http_not_loopback"},
		{url: "file:///etc/passwd", class: refusal.Config, reason: ReasonURLInvalid},
		{url: "https://u:p@mcp.example.com/secret-path", class: refusal.Refused},
		{url: "::not a url", class: refusal.Config, reason: ReasonURLInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			err := f.Admit(context.Background(), ports.Target{ServerID: "s", Kind: ports.TransportHTTP, URL: tt.url})
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.class, refusal.ClassOf(err))
			if tt.reason != "" {
				assert.Equal(t, tt.reason, refusal.ReasonOf(err))
			}
			assert.NotContains(t, err.Error(), "secret-path")
			assert.NotContains(t, err.Error(), "u:p")
		})
	}
	err := f.Admit(context.Background(), ports.Target{ServerID: "s", Kind: ports.TransportStdio})
	assert.Equal(t, ReasonKindMismatch, refusal.ReasonOf(err))
}
