package catalog

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/ports"
)

func TestMain(m *testing.M) {
	// Discover and Build start goroutines; none may outlive them.
	goleak.VerifyTestMain(m)
}

// decode decodes s as a tool schema is decoded: encoding/json into an any.
func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v), "test input must be JSON")
	return v
}

// item returns a ToolItem named name with the schema s (JSON).
func item(t testing.TB, name, s string) ports.ToolItem {
	t.Helper()
	return ports.ToolItem{Name: name, Description: "tool " + name, InputSchema: decode(t, s)}
}

// fakeCaller records calls and answers with a fixed result or error, or
// with fn when set.
type fakeCaller struct {
	mu    sync.Mutex
	calls []ports.CallRequest
	res   ports.CallResult
	err   error
	fn    func(ctx context.Context, r ports.CallRequest) (ports.CallResult, error)
}

func (c *fakeCaller) Call(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
	c.mu.Lock()
	c.calls = append(c.calls, r)
	c.mu.Unlock()
	if c.fn != nil {
		return c.fn(ctx, r)
	}
	return c.res, c.err
}

func (c *fakeCaller) requests() []ports.CallRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ports.CallRequest(nil), c.calls...)
}

// oneTool builds a catalog of server "srv" with one tool "t" of schema s
// and returns that tool.
func oneTool(t testing.TB, s string, c Caller, opts *Options) *Tool {
	t.Helper()
	cat := Build("srv", ports.SessionIdentity{ServerID: "srv"}, Lists{Tools: []ports.ToolItem{item(t, "t", s)}}, c, opts)
	require.Len(t, cat.Tools, 1, "rejected: %v", cat.Rejected)
	return cat.Tools[0]
}
