package main

import (
	"context"
	"encoding/json"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
)

// TestServeElicitationMultiRound: a go-sdk client at its default protocol
// version (2026-07-28: a server may not send elicitation/create while
// serving a call) that declared elicitation, over stdio to "mcpward serve"
// and "mcpward serve asker": the upstream's question comes back inside the
// call's input-required result, the client's SDK answers it and retries,
// and the retry's result is the upstream's final one. A retry with a
// state serve never handed out is refused by name; without elicitation
// declared the question is refused by name as before.
func TestServeElicitationMultiRound(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"asker": {"command": ` + jsonString(exe) +
			`, "env": {"` + testserver.Env + `": "` + testserver.ModeElicit + `"}}}}`,
	})
	for _, tc := range []struct {
		args []string
		tool string
	}{{[]string{"serve"}, "mcp__asker__ask"}, {[]string{"serve", "asker"}, "ask"}} {
		t.Run(tc.args[len(tc.args)-1], func(t *testing.T) {
			// Never blocks: a second question would fail the count below,
			// not hang the call.
			asked := make(chan *mcp.ElicitParams, 1)
			var questions atomic.Int32
			c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "0"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					questions.Add(1)
					select {
					case asked <- r.Params:
					default:
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann", "age": 41, "score": 1.5, "status": "pending", "verified": false}}, nil
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			stderr := &iostreams.Buffer{}
			cmd := serveCmd(w, tc.args...)
			cmd.Stderr = stderr
			cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			require.NoError(t, err, stderr.String())
			defer cs.Close()
			waitTool(t, cs, tc.tool)
			r := call(t, cs, tc.tool, map[string]any{})
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(text(r)), &got), text(r))
			assert.Equal(t, "accept", got["action"], text(r))
			assert.Equal(t, "Ann", got["content"].(map[string]any)["name"])
			assert.Equal(t, int32(1), questions.Load(), "one question asked")
			p := <-asked
			schema, _ := json.Marshal(p.RequestedSchema)
			assert.Contains(t, string(schema), `"enum":["active","inactive","pending"]`)

			r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, RequestState: "forged",
				InputResponses: mcp.InputResponseMap{"elicitation": &mcp.ElicitResult{Action: "accept"}}})
			require.NoError(t, err)
			assert.True(t, r.IsError)
			assert.Contains(t, text(r), "input_state_unknown", text(r))
		})
	}

	// A 2026-07-28 client without elicitation: refused by name.
	cs, _, _ := connectStdio(t, w, &iostreams.Buffer{})
	waitTool(t, cs, "mcp__asker__ask")
	r := call(t, cs, "mcp__asker__ask", map[string]any{})
	assert.Contains(t, text(r), "elicitation_unavailable", text(r))
}
