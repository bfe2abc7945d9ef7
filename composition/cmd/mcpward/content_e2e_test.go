package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/entries"
)

// TestEverythingPromptsAndResources runs prompts, prompt, resources and
// read of the built CLI against server-everything over stdio and
// Streamable HTTP.
func TestEverythingPromptsAndResources(t *testing.T) {
	node, entry := everythingCommand(t)
	url := startEverythingHTTP(t, node, entry)
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {
  "every": {"command": ` + jsonString(node) + `, "args": [` + jsonString(entry) + `, "stdio"]},
  "everyweb": {"type": "http", "url": ` + jsonString(url) + `}
}}`,
	}, "PATH="+filepath.Dir(node))
	for _, server := range []string{"every", "everyweb"} {
		t.Run(server, func(t *testing.T) {
			r := w.run(t, "prompts", server)
			require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			assert.Contains(t, r.stdout, server+": connected\n")
			assert.Contains(t, r.stdout, "mcp__"+server+"__args-prompt")
			assert.Contains(t, r.stdout, server+"/args-prompt")
			assert.Contains(t, r.stdout, "      city (required): Name of the city\n")

			r = w.run(t, "prompts", server, "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var ps []entries.ServerPrompts
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &ps))
			require.Len(t, ps, 1)
			assert.Equal(t, "connected", ps[0].State)
			var args *entries.Prompt
			for i := range ps[0].Prompts {
				if ps[0].Prompts[i].ServerPrompt == "args-prompt" {
					args = &ps[0].Prompts[i]
				}
			}
			require.NotNil(t, args)
			assert.Equal(t, "mcp__"+server+"__args-prompt", args.Name)
			require.Len(t, args.Arguments, 2)
			assert.True(t, args.Arguments[0].Required)

			r = w.run(t, "prompt", server, "args-prompt", "--args", `{"city":"Oslo"}`)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, "[user]\n  What's weather in Oslo?\n", r.stdout)

			r = w.run(t, "prompt", server, "args-prompt", "--args", `{"city":"Oslo"}`, "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var pr entries.PromptResult
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &pr))
			require.Len(t, pr.Messages, 1)
			assert.Equal(t, "user", pr.Messages[0].Role)
			assert.JSONEq(t, `{"type":"text","text":"What's weather in Oslo?"}`, string(pr.Messages[0].Content))

			for _, bad := range []struct{ args, reason string }{
				{`{"city":"Oslo","country":"NO"}`, "unknown_argument"},
				{`{"state":"x"}`, "missing_argument"},
			} {
				r = w.run(t, "prompt", server, "args-prompt", "--args", bad.args)
				assert.Equal(t, 1, r.code, r.stderr)
				assert.Contains(t, r.stderr, bad.reason)
				assert.NotContains(t, r.stderr, "country", "an argument name typed is not echoed")
				assert.NotContains(t, r.stderr, "Oslo", "an argument value is not echoed")
			}
			// The refusal names the argument (#25 item 6).
			r = w.run(t, "prompt", server, "args-prompt", "--args", `{"state":"x"}`, "--json")
			assert.Equal(t, 1, r.code, r.stderr)
			assert.Contains(t, r.stdout, `"detail": "the required argument \"city\" has no value"`)
			r = w.run(t, "prompt", server, "args-prompt", "--args", `{"city":"Oslo","country":"NO"}`)
			assert.Contains(t, r.stderr, `it declares "city" and "state"`)
			r = w.run(t, "prompt", server, "no-such-prompt")
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stderr, "unknown_prompt")
			r = w.run(t, "prompt", server, "args-prompt", "--args", `{"city":1}`)
			assert.Equal(t, 2, r.code, "non-string arguments are a usage error")

			r = w.run(t, "prompt", server, "completable-prompt", "--complete", "name", "--args", `{"department":"Sales"}`)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, "David\nEve\nFrank\n", r.stdout)
			r = w.run(t, "prompt", server, "completable-prompt", "--complete", "department", "--args", `{"department":"S"}`, "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var comp entries.Completion
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &comp))
			assert.Equal(t, []string{"Sales", "Support"}, comp.Values)
			r = w.run(t, "prompt", server, "completable-prompt", "--complete", "nope")
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stderr, "unknown_argument")
			r = w.run(t, "read", server, "demo://resource/dynamic/text/{resourceId}", "--complete", "resourceId", "--args", `{"resourceId":"42"}`)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, "42\n", r.stdout)

			r = w.run(t, "resources", server)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stdout, "  demo://resource/static/document/architecture.md")
			assert.Contains(t, r.stdout, "  template demo://resource/dynamic/text/{resourceId}")

			r = w.run(t, "resources", server, "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var rs []entries.ServerResources
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &rs))
			require.Len(t, rs, 1)
			assert.NotEmpty(t, rs[0].Resources)
			require.NotEmpty(t, rs[0].Templates)
			assert.Equal(t, []string{"resourceId"}, rs[0].Templates[0].Variables)

			r = w.run(t, "read", server, "demo://resource/dynamic/text/1")
			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stdout, "Resource 1: This is a plaintext resource")

			r = w.run(t, "read", server, "demo://resource/dynamic/text/{resourceId}", "--args", `{"resourceId":"3"}`)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, r.stdout, "Resource 3: ")

			r = w.run(t, "read", server, "demo://resource/dynamic/text/{resourceId}", "--args", `{"other":"3"}`)
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stderr, "unknown_argument")
			r = w.run(t, "read", server, "demo://resource/{x}")
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stderr, "unknown_template")

			r = w.run(t, "read", server, "demo://resource/dynamic/blob/1", "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var rr entries.ReadResult
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &rr))
			require.Len(t, rr.Contents, 1)
			require.NotNil(t, rr.Contents[0].Blob)
			assert.Contains(t, string(*rr.Contents[0].Blob), "Resource 1")
			r = w.run(t, "read", server, "demo://resource/dynamic/blob/1")
			require.Equal(t, 0, r.code, r.stderr)
			assert.Regexp(t, `^\[blob \d+ bytes, text/plain\]\n$`, r.stdout)

			r = w.run(t, "read", server, "demo://no-such-resource")
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stderr, "read_rejected")
			// The server's own message is kept beside the reason (#25 item 6).
			assert.Contains(t, r.stderr, "Resource demo://no-such-resource not found")
			r = w.run(t, "read", server, "demo://no-such-resource", "--json")
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stdout, "Resource demo://no-such-resource not found")
			r = w.run(t, "read", server, "relative")
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stderr, "invalid_uri")
		})
	}
}
