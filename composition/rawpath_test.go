package composition

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/ports"
)

// TestOwnCallPathOverRealTransports: mcpsession sends tools/call on a path
// of its own beside the SDK's, on the same connection (its
// rawrequest.go): its requests and the SDK's are written concurrently
// through one transport's Write. Over the real transports — stdio (the
// example server as a child) and Streamable HTTP (an in-process go-sdk
// server) — in both eras, calls on the own path (text and structured
// results, progress) and listings on the SDK's path, all at once, each
// get their own answer.
func TestOwnCallPathOverRealTransports(t *testing.T) {
	bin := exampleBinary(t)
	binJSON, _ := json.Marshal(bin)

	srv := mcp.NewServer(&mcp.Implementation{Name: "peer", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "add"}, func(_ context.Context, _ *mcp.CallToolRequest, a addIn) (*mcp.CallToolResult, addOut, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatFloat(a.A+a.B, 'g', -1, 64)}}}, addOut{Sum: a.A + a.B}, nil
	})
	// Stateless, as a server behind a load balancer: the go-sdk speaks
	// both eras that way.
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)

	for _, tc := range []struct{ name, doc string }{
		{"stdio", `{"mcpServers": {"s": {"command": ` + string(binJSON) + `}}}`},
		{"http", `{"mcpServers": {"s": {"type": "http", "url": "` + hs.URL + `/mcp"}}}`},
	} {
		for _, era := range []struct {
			name   string
			accept []string
		}{{"legacy", mcpsession.LegacyVersions()}, {"modern", mcpsession.ModernVersions()}} {
			t.Run(tc.name+"/"+era.name, func(t *testing.T) {
				r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), map[string]string{"LANG": "C"})})
				res, tg := r.evalTarget(t, userSrc(tc.doc), "s")
				require.Equal(t, StateAllowed, res.State, res.Reason)
				conn, err := r.host.Dialer().Dial(context.Background(), tg)
				require.NoError(t, err)
				c := mcpsession.New(mcpsession.DialerFunc(func(context.Context, ports.Target) (*mcpsession.Conn, error) { return conn, nil }),
					&mcpsession.Options{AcceptVersions: era.accept})
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				s, err := c.Connect(ctx, tg, ports.Signals{})
				require.NoError(t, err)
				defer s.Close()

				var wg sync.WaitGroup
				for g := range 6 {
					wg.Add(3)
					go func() { // text results on the own path
						defer wg.Done()
						for i := range 30 {
							text := fmt.Sprintf("caller %d call %d", g, i)
							args, _ := json.Marshal(map[string]string{"text": text})
							out, err := s.Call(ctx, ports.CallRequest{Name: "echo", Arguments: args})
							if assert.NoError(t, err) {
								var blocks []struct{ Text string }
								assert.NoError(t, json.Unmarshal(out.Content, &blocks))
								if assert.Len(t, blocks, 1) {
									assert.Equal(t, text, blocks[0].Text)
								}
							}
						}
					}()
					go func() { // structured results, with progress asked for
						defer wg.Done()
						for i := range 30 {
							out, err := s.Call(ctx, ports.CallRequest{Name: "add", Arguments: json.RawMessage(fmt.Sprintf(`{"a":%d,"b":%d}`, g, i)),
								OnProgress: func(ports.Progress) {}})
							if assert.NoError(t, err) {
								assert.JSONEq(t, fmt.Sprintf(`{"sum":%d}`, g+i), string(out.StructuredContent))
							}
						}
					}()
					go func() { // the SDK's path
						defer wg.Done()
						for range 10 {
							p, err := s.List(ctx, ports.ListTools, "")
							if assert.NoError(t, err) {
								assert.NotEmpty(t, p.Tools)
							}
						}
					}()
				}
				wg.Wait()
			})
		}
	}
}
