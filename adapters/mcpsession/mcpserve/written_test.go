package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// writtenSchema is an input schema as a server may write it: 2020-12
// keywords, $defs with an $anchor, composition, a conditional, a vendor
// keyword, a $ref to a network address (refURL is replaced), an
// x-mcp-header annotation.
const writtenSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
"$defs":{"region":{"$anchor":"region","type":"string","enum":["eu","us"]}},
"properties":{"region":{"type":"string","$ref":"#/$defs/region","x-mcp-header":"Region"},"remote":{"$ref":"refURL"},
"n":{"type":"integer","minimum":1}},
"allOf":[{"required":["region"]}],"if":{"properties":{"n":{"const":1}}},"then":{"required":["n"]},"x-vendor":{"k":[1,2]}}`

// TestServeWrittenSchema: a tool is offered with its input schema as the
// server wrote it (every keyword, the $ref left as written, never fetched:
// the address it names is never asked), in both eras; arguments are the
// Backend's to validate (they reach it unchanged). Over HTTP a modern
// client's Mcp-Param header is checked against the arguments by serve as
// a server: the go-sdk client's own header passes, a mismatching one is
// refused 400 with -32020 (header mismatch) before the call reaches the Backend. A written
// schema that is not an object schema, or whose x-mcp-header annotations
// the SDK refuses, leaves the narrowed one offered.
func TestServeWrittenSchema(t *testing.T) {
	var fetched atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ref := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Add(1)
		_, _ = io.WriteString(w, `{"type":"string"}`)
	}), ReadHeaderTimeout: time.Second}
	go func() { _ = ref.Serve(ln) }()
	t.Cleanup(func() { _ = ref.Close() })
	written := strings.ReplaceAll(writtenSchema, "refURL", "http://"+ln.Addr().String()+"/schema.json")
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, []byte(written)))

	var calls atomic.Int32
	var lastArgs atomic.Value
	b := newFake(Catalog{Tools: []Tool{
		{Name: "regional", InputSchema: objSchema, ServerInputSchema: json.RawMessage(compact.String())},
		{Name: "plain", InputSchema: objSchema, ServerInputSchema: json.RawMessage(`{"type":"string"}`)},
		{Name: "badheader", InputSchema: objSchema, ServerInputSchema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"O"}}}`)},
	}})
	b.call = func(_ context.Context, _ string, args json.RawMessage) (ports.ToolResult, error) {
		calls.Add(1)
		lastArgs.Store(string(args))
		return ports.ToolResult{Content: json.RawMessage(`[{"type":"text","text":"ok"}]`)}, nil
	}
	s := New(b, nil)
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { done <- s.ServeHTTP(sctx, hl, HTTPOptions{Token: testToken}) }()
	t.Cleanup(func() { stop(); <-done; s.Close() })
	addr := hl.Addr().String()

	for _, version := range []string{"", "2025-11-25"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: &headerRecorder{}}, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		res, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		got := map[string]string{}
		for _, tl := range res.Tools {
			raw, _ := json.Marshal(tl.InputSchema)
			got[tl.Name] = string(raw)
		}
		assert.JSONEq(t, compact.String(), got["regional"], "version %q: the schema as written", version)
		assert.JSONEq(t, string(objSchema), got["plain"], "version %q: not an object schema: the narrowed one", version)
		assert.JSONEq(t, string(objSchema), got["badheader"], "version %q: annotations the SDK refuses: the narrowed one", version)
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "regional", Arguments: map[string]any{"region": "eu", "n": 0}})
		require.NoError(t, err)
		assert.False(t, r.IsError, resultText(r))
		assert.JSONEq(t, `{"region":"eu","n":0}`, lastArgs.Load().(string), "the arguments reach the Backend unchanged")
		_ = cs.Close()
	}
	assert.Zero(t, fetched.Load(), "a $ref is never fetched")

	// A modern request whose Mcp-Param-Region disagrees with the
	// arguments.
	before := calls.Load()
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"regional","arguments":{"region":"eu"},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, tc := range []struct {
		header string
		status int
	}{{"us", http.StatusBadRequest}, {"eu", http.StatusOK}} {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "regional")
		req.Header.Set("Mcp-Param-Region", tc.header)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, tc.status, resp.StatusCode, "Mcp-Param-Region %s: %s", tc.header, raw)
		if tc.status == http.StatusBadRequest {
			assert.Contains(t, string(raw), `"code":-32020`, "header mismatch")
			assert.Equal(t, before, calls.Load(), "refused before the Backend")
		}
	}
	assert.Equal(t, before+1, calls.Load())
}
