package mcpsession

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// headerPage is a page the SDK's filter decides: one tool with a valid
// x-mcp-header annotation, one with an invalid one, one null.
const headerPage = `{"tools":[{"name":"ok","inputSchema":{"type":"object","properties":{"p":{"type":"string","x-mcp-header":"P"}}}},` +
	`{"name":"bad","inputSchema":{"type":"object","properties":{"p":{"type":"number","x-mcp-header":"P"}}}},null,` +
	`{"name":"plain","inputSchema":{"type":"object"}}],"nextCursor":"n2","ttlMs":5000,"cacheScope":"public"}`

// plainPage is a page the SDK's filter cannot change.
const plainPage = `{"tools":[{"name":"a","title":"A","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},` +
	`"_meta":{"k":[1,{"b":null}]},"annotations":{"readOnlyHint":true},"outputSchema":{"type":"object"}},{"name":"b","inputSchema":{}}],` +
	`"nextCursor":"n<&>","ttlMs":86400001,"cacheScope":"private","_meta":{"m":1}}`

// TestListToolsOwnPath: a tools page goes out on the session's own path,
// its params byte for byte those the SDK sends (the SEP-2575 _meta of a
// modern session and the log level it asked for included, with and
// without a cursor), and List gives the page the SDK's path gives: the
// same tools, dropped tools, cursor and caching hint. A page the SDK's
// filter decides is handed to the SDK's ListTools as received (nothing is
// asked for again), and its header tools are kept for WithTool.
func TestListToolsOwnPath(t *testing.T) {
	caps := map[string]any{"tools": map[string]any{}, "logging": map[string]any{}}
	for _, version := range []string{"2025-11-25", ModernProtocolVersion} {
		for _, page := range []string{plainPage, headerPage} {
			for _, cursor := range []string{"", "c\"<&>\u2028"} {
				name := version + map[bool]string{true: "/header", false: "/plain"}[page == headerPage] + map[bool]string{true: "/cursor"}[cursor != ""]
				t.Run(name, func(t *testing.T) {
					sig := ports.Signals{Log: func(ports.LogMessage) {}}
					var pages [2]ports.Page
					var params [2]json.RawMessage
					for i, sdk := range []bool{true, false} {
						s, _, rec := rawPeer(t, version, caps, sig, sdk, func(method string, _ json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
							return json.RawMessage(page), nil
						})
						got, err := s.List(context.Background(), ports.ListTools, cursor)
						require.NoError(t, err)
						lists := listsOf(rec, cursor)
						require.NotEmpty(t, lists)
						pages[i], params[i] = got, lists[0].Params
						if sdk {
							require.Len(t, lists, 1)
							continue
						}
						id, _ := lists[0].ID.Raw().(string)
						assert.True(t, strings.HasPrefix(id, rawIDPrefix), "the first request is the session's own")
						require.Len(t, lists, 1, "one request for a page, a header page too (the SDK decides it from the page received)")
					}
					require.NotEmpty(t, params[0])
					assert.Equal(t, string(params[0]), string(params[1]), "params as the SDK sends them")
					if Modern(version) {
						assert.Contains(t, string(params[1]), mcp.MetaKeyClientCapabilities)
						assert.Contains(t, string(params[1]), mcp.MetaKeyLogLevel)
					}
					pages[1].Tools = asTrees(t, pages[1].Tools) // raw schemas, as the catalog reads them
					assert.Equal(t, pages[0], pages[1], "the page the SDK's path gives")
					if Modern(version) {
						require.NotNil(t, pages[1].Cache)
					} else {
						assert.Nil(t, pages[1].Cache)
					}
					if page == headerPage {
						assert.Equal(t, []ports.DroppedTool{{Name: "bad", Reason: DropInvalidHeaderAnnotation}, {Reason: DropNullTool}}, pages[1].Dropped)
					}
				})
			}
		}
	}
}

// TestListToolsOwnPathKeepsHeaderTools: on a session with WithTool, the
// listed tools with an x-mcp-header annotation are kept for Call on the
// own path as on the SDK's.
func TestListToolsOwnPathKeepsHeaderTools(t *testing.T) {
	s, _, _ := rawPeer(t, ModernProtocolVersion, nil, ports.Signals{}, false, func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
		return json.RawMessage(headerPage), nil
	})
	s.conn.WithTool = func(ctx context.Context, _ *mcp.Tool) context.Context { return ctx }
	_, err := s.List(context.Background(), ports.ListTools, "")
	require.NoError(t, err)
	_, ok := s.headerTools.Load("ok")
	assert.True(t, ok)
	_, ok = s.headerTools.Load("plain")
	assert.False(t, ok)
	_, ok = s.headerTools.Load("bad")
	assert.False(t, ok, "excluded by the SDK")
}

// TestListToolsFailuresAsSDK: an error reply, a result that does not
// decode (not an object, a field of the wrong type, nested deeper than the
// SDK decodes), a connection that ends with the page in flight, a context
// that ends in flight and a Close in flight are refused the same way on
// both paths.
func TestListToolsFailuresAsSDK(t *testing.T) {
	deep := `{"tools":[{"name":"a","_meta":{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}]}`
	type outcome struct {
		class  refusal.Class
		reason string
	}
	for _, tc := range []struct {
		name  string
		reply string
		run   func(s *session, p *memPeer, release chan struct{}) error
	}{
		{name: "error_reply", reply: "reject"},
		{name: "array", reply: `[1]`},
		{name: "wrong_type", reply: `{"tools":[{"name":1}]}`},
		{name: "tools_object", reply: `{"tools":{}}`},
		{name: "too_deep", reply: deep},
		{name: "connection_lost", reply: "hang", run: func(s *session, p *memPeer, release chan struct{}) error {
			go func() {
				time.Sleep(50 * time.Millisecond)
				_ = p.conn.Close()
				close(release)
			}()
			_, err := s.List(context.Background(), ports.ListTools, "")
			return err
		}},
		{name: "ctx_ends", reply: "hang", run: func(s *session, _ *memPeer, release chan struct{}) error {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, err := s.List(ctx, ports.ListTools, "")
			close(release)
			return err
		}},
		{name: "close", reply: "hang", run: func(s *session, _ *memPeer, release chan struct{}) error {
			go func() {
				time.Sleep(50 * time.Millisecond)
				_ = s.Close()
				close(release)
			}()
			_, err := s.List(context.Background(), ports.ListTools, "")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]outcome
			for i, sdk := range []bool{true, false} {
				release := make(chan struct{})
				s, p, rec := rawPeer(t, "2025-11-25", nil, ports.Signals{}, sdk, func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
					switch tc.reply {
					case "reject":
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no " + canary}
					case "hang":
						<-release
						return json.RawMessage(`{"tools":[]}`), nil
					}
					return json.RawMessage(tc.reply), nil
				})
				run := tc.run
				if run == nil {
					run = func(s *session, _ *memPeer, release chan struct{}) error {
						close(release)
						_, err := s.List(context.Background(), ports.ListTools, "")
						return err
					}
				}
				err := run(s, p, release)
				re := refusalOf(err)
				require.NotNil(t, re, "%v", err)
				assertNoCanary(t, err)
				got[i] = outcome{re.Class, re.Reason}
				if !sdk {
					lists := rec.requests("tools/list")
					require.NotEmpty(t, lists)
					id, _ := lists[0].ID.Raw().(string)
					assert.True(t, strings.HasPrefix(id, rawIDPrefix))
					assert.Len(t, lists, 1, "a refused page is not asked for again")
				}
				_ = s.Close()
			}
			assert.Equal(t, got[0], got[1], "the SDK's path and the session's own")
			t.Logf("%s: %+v", tc.name, got[1])
		})
	}
}

// TestDecodeListToolsAsSDK: the page decoder's two differences from
// encoding/json, which are the SDK's: field names match case-sensitively,
// and a result nested deeper than 1,000 arrays and objects (counted
// outside strings) does not decode.
func TestDecodeListToolsAsSDK(t *testing.T) {
	nest := func(n int) string {
		return `{"tools":[],"_meta":{"x":` + strings.Repeat("[", n-2) + strings.Repeat("]", n-2) + `}}`
	}
	for _, tc := range []struct {
		name  string
		raw   string
		tools int
		fails bool
	}{
		{"exact names", `{"tools":[{"name":"a"}]}`, 1, false},
		{"other case", `{"Tools":[{"Name":"a"}]}`, 0, false},
		{"tool field other case", `{"tools":[{"NAME":"a"}]}`, 1, false},
		{"null", `null`, 0, false},
		{"depth 1000", nest(1000), 0, false},
		{"depth 1001", nest(1001), 0, true},
		{"brackets in strings", `{"tools":[],"_meta":{"x":"` + strings.Repeat(`[{\"`, 1200) + `"}}`, 0, false},
		{"not an object", `[]`, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := decodeListTools(json.RawMessage(tc.raw))
			if tc.fails {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), `calling "tools/list": `))
				return
			}
			require.NoError(t, err)
			assert.Len(t, res.Tools, tc.tools)
			if tc.name == "tool field other case" {
				assert.Empty(t, res.Tools[0].Name, "NAME is not name")
			}
		})
	}
}

// listsOf returns the tools/list requests written for cursor.
func listsOf(rec *writeRecorder, cursor string) []*jsonrpc.Request {
	var out []*jsonrpc.Request
	for _, r := range rec.requests("tools/list") {
		var p struct {
			Cursor string `json:"cursor"`
		}
		if json.Unmarshal(r.Params, &p) == nil && p.Cursor == cursor {
			out = append(out, r)
		}
	}
	return out
}
