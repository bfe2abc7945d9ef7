package mcpserve

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/ports"
)

// CacheHints is an optional interface of a Backend: CacheHint returns the
// caching hint of a list of kind (protocol 2026-07-28 and later: ttlMs
// and cacheScope), how long a client may keep the answer and whether it
// is meant for this user alone. A resources/read carries the hint of the
// resources list. It is called for every list and read answered, and
// must be safe for concurrent use. Without it every answer is stale at
// once (ttlMs 0) and private: the live set may change at any moment.
type CacheHints interface {
	CacheHint(kind ports.ListKind) (ttl time.Duration, private bool)
}

// maxHintMs bounds a ttlMs handed out (ports.MaxCacheTTL).
const maxHintMs = int(ports.MaxCacheTTL / time.Millisecond)

// cacheHint is the ttlMs and cacheScope of the answer to r.
func cacheHint(b Backend, r mcp.Request) (int, string) {
	ch, ok := b.(CacheHints)
	if !ok {
		return 0, "private"
	}
	var kind ports.ListKind
	switch r.(type) {
	case *mcp.ListToolsRequest:
		kind = ports.ListTools
	case *mcp.ListPromptsRequest:
		kind = ports.ListPrompts
	case *mcp.ListResourcesRequest, *mcp.ReadResourceRequest:
		kind = ports.ListResources
	case *mcp.ListResourceTemplatesRequest:
		kind = ports.ListResourceTemplates
	default:
		return 0, "private"
	}
	ttl, private := ch.CacheHint(kind)
	ms := int(ttl / time.Millisecond) // rounded down: never past the hint
	if ms <= 0 {
		return 0, "private"
	}
	ms = min(ms, maxHintMs)
	if private {
		return ms, "private"
	}
	return ms, "public"
}
