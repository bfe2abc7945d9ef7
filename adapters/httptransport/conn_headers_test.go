package httptransport

import (
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// eraServer is a go-sdk server with a tool whose region argument goes to
// an Mcp-Param-Region header, a prompt and a resource: legacy serves it
// with protocol sessions, modern stateless (where the go-sdk speaks
// 2026-07-28 and checks the standard headers).
func eraServer(t *testing.T, modern bool) *testServer {
	s := mcp.NewServer(&mcp.Implementation{Name: "era", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "route", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"zone":{"type":"object","properties":{"id":{"type":"integer","x-mcp-header":"Zone"}}}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///a.txt", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///a.txt", Text: "a"}}}, nil
	})
	return newTestServer(t, false, mcpHandler(s, &mcp.StreamableHTTPOptions{Stateless: modern}))
}

// eraScript connects through tr in the era and lists, calls, gets and
// reads once each, then closes; withTool hands the call its tool.
func eraScript(t *testing.T, tr mcp.Transport, modern, withTool bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpward-test", Version: "0"}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	var opts *mcp.ClientSessionOptions
	if !modern {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := c.Connect(ctx, tr, opts)
	require.NoError(t, err)
	lt, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, lt.Tools, 1)
	cctx := ctx
	if withTool {
		cctx = WithTool(ctx, lt.Tools[0])
	}
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "route", Arguments: map[string]any{"region": " eu-west ", "zone": map[string]any{"id": 7}}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
	require.NoError(t, err)
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///a.txt"})
	require.NoError(t, err)
	require.NoError(t, cs.Close())
}

// headerLines describes each request srv saw: the HTTP method, the
// JSON-RPC method, and the protocol headers (a session id as <id>), one
// sorted line each (the standalone GET stream runs concurrently).
func headerLines(srv *testServer) []string {
	var out []string
	for _, r := range srv.requests() {
		var b strings.Builder
		b.WriteString(r.Method)
		if m := rpcMethod(r.Body); m != "" {
			b.WriteString(" " + m)
		}
		for _, h := range []string{"Accept", "Content-Type", "Mcp-Protocol-Version", "Mcp-Session-Id", "Mcp-Method", "Mcp-Name", "Mcp-Param-Region", "Mcp-Param-Zone", "Last-Event-Id"} {
			v, ok := r.Header[h]
			if !ok {
				continue
			}
			val := strings.Join(v, ",")
			if h == "Mcp-Session-Id" {
				val = "<id>"
			}
			b.WriteString(" | " + h + ": " + val)
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	return out
}

// TestHeadersPerEra: the requests our connection sends in each era, and
// the protocol headers on each, are the go-sdk's own transport's for the
// same session (the same go-sdk client and server), and are pinned in a
// golden file (-update rewrites it).
func TestHeadersPerEra(t *testing.T) {
	for _, modern := range []bool{false, true} {
		name := map[bool]string{false: "legacy", true: "modern"}[modern]
		t.Run(name, func(t *testing.T) {
			sdkSrv := eraServer(t, modern)
			hc := &http.Client{Transport: &http.Transport{}}
			defer hc.CloseIdleConnections()
			eraScript(t, &mcp.StreamableClientTransport{Endpoint: sdkSrv.URL, HTTPClient: hc, MaxRetries: -1}, modern, false)

			ourSrv := eraServer(t, modern)
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", ourSrv.URL, nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			eraScript(t, tr, modern, true)

			// Close returns before the server has logged the DELETE or the
			// end of the GET stream only in theory: the DELETE is answered
			// before Close returns.
			got, want := headerLines(ourSrv), headerLines(sdkSrv)
			assert.Equal(t, want, got, "the SDK's requests and headers")

			golden := filepath.Join("testdata", "headers_"+name+".golden")
			text := strings.Join(got, "\n") + "\n"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(text), 0o644))
			}
			b, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to write it")
			assert.Equal(t, string(b), text)
		})
	}
}

// TestParamHeadersMatchSDK is a property over generated arguments: for the
// same tool and the same arguments, a tools/call through our connection
// (given the tool by WithTool) carries exactly the Mcp-Param-* headers the
// go-sdk's transport writes (strings with edge spaces, control bytes,
// non-ASCII and base64-looking values; integers in and out of the safe
// range, fractions, booleans, null, objects, absent members).
func TestParamHeadersMatchSDK(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session := func(tr mcp.Transport) (*mcp.ClientSession, *mcp.Tool) {
		c := mcp.NewClient(&mcp.Implementation{Name: "mcpward-test", Version: "0"}, &mcp.ClientOptions{
			Capabilities:   &mcp.ClientCapabilities{},
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		})
		cs, err := c.Connect(ctx, tr, nil)
		require.NoError(t, err)
		lt, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		return cs, lt.Tools[0]
	}
	sdkSrv, ourSrv := eraServer(t, true), eraServer(t, true)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	sdkCS, _ := session(&mcp.StreamableClientTransport{Endpoint: sdkSrv.URL, HTTPClient: hc, MaxRetries: -1})
	defer sdkCS.Close()
	tr, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("s", ourSrv.URL, nil), nil)
	require.NoError(t, err)
	closeIdle(t, tr)
	ourCS, tool := session(tr)
	defer ourCS.Close()

	lastParams := func(srv *testServer) map[string]string {
		reqs := srv.requests()
		for i := len(reqs) - 1; i >= 0; i-- {
			if rpcMethod(reqs[i].Body) != "tools/call" {
				continue
			}
			out := map[string]string{}
			for k, v := range reqs[i].Header {
				if strings.HasPrefix(k, "Mcp-Param-") {
					out[k] = strings.Join(v, ",")
				}
			}
			return out
		}
		return nil
	}
	rng := rand.New(rand.NewPCG(28, 1))
	runes := []rune{'a', 'Z', '0', ' ', '\t', '\n', '\x00', '\x7f', 'é', '世', '=', '?', '"', '\\'}
	value := func() any {
		switch rng.IntN(9) {
		case 0:
			return nil
		case 1:
			return rng.IntN(2) == 0
		case 2:
			return rng.Int64N(1<<54) - 1<<53
		case 3:
			return rng.Float64() * 100
		case 4:
			return map[string]any{"k": "v"}
		case 5:
			return "=?base64?" + "aGk=" + "?="
		default:
			var b strings.Builder
			for range rng.IntN(12) {
				b.WriteRune(runes[rng.IntN(len(runes))])
			}
			return b.String()
		}
	}
	for i := range 300 {
		args := map[string]any{}
		if rng.IntN(5) > 0 {
			args["region"] = value()
		}
		switch rng.IntN(3) {
		case 0:
			args["zone"] = map[string]any{"id": value()}
		case 1:
			args["zone"] = value()
		}
		p := &mcp.CallToolParams{Name: "route", Arguments: args}
		_, sdkErr := sdkCS.CallTool(ctx, p)
		_, ourErr := ourCS.CallTool(WithTool(ctx, tool), p)
		require.Equal(t, sdkErr == nil, ourErr == nil, "case %d %v: sdk %v, ours %v", i, args, sdkErr, ourErr)
		require.Equal(t, lastParams(sdkSrv), lastParams(ourSrv), "case %d: %#v", i, args)
	}
}
