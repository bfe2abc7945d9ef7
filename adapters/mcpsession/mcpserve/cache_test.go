package mcpserve

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// hinting is a Backend with caching hints per list kind.
type hinting struct {
	*fakeBackend
	hints map[ports.ListKind]time.Duration
	priv  bool
}

func (h hinting) CacheHint(kind ports.ListKind) (time.Duration, bool) { return h.hints[kind], h.priv }

// TestCacheHints: a Backend's caching hints reach a 2026-07-28 client on
// each list and read: ttlMs rounded down to the millisecond (never past
// the hint), at most ports.MaxCacheTTL, "public" only when the Backend
// says so; 0 or less is ttlMs 0, "private"; a Backend without hints
// gives 0, "private".
func TestCacheHints(t *testing.T) {
	fb := newFake(Catalog{Tools: []Tool{{Name: "t", InputSchema: objSchema}}, Prompts: []Prompt{{Name: "p"}},
		Resources: []Resource{{URI: "file:///r", Name: "r"}}})
	for _, tc := range []struct {
		name  string
		b     Backend
		tools int
		scope string
		read  int
	}{
		{"no hints", fb, 0, "private", 0},
		{"public", hinting{fb, map[ports.ListKind]time.Duration{ports.ListTools: 1500*time.Microsecond + time.Second, ports.ListResources: 48 * time.Hour}, false},
			1001, "public", int(ports.MaxCacheTTL / time.Millisecond)},
		{"private", hinting{fb, map[ports.ListKind]time.Duration{ports.ListTools: time.Minute, ports.ListResources: -time.Second}, true},
			60000, "private", 0},
		{"under a millisecond", hinting{fb, map[ports.ListKind]time.Duration{ports.ListTools: time.Microsecond}, false}, 0, "private", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.b, nil)
			t.Cleanup(s.Close)
			cs := connectAt(t, s, nil, nil)
			ctx := context.Background()
			lt, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.tools, lt.TTLMs)
			assert.Equal(t, tc.scope, lt.CacheScope)
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///r"})
			require.NoError(t, err)
			assert.Equal(t, tc.read, rr.TTLMs)
			lp, err := cs.ListPrompts(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, 0, lp.TTLMs, "no hint for prompts")
			assert.Equal(t, "private", lp.CacheScope)
		})
	}
}
