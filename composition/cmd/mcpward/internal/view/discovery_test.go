package view

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/adapters/oauth"
)

func TestHintSignIn(t *testing.T) {
	assert.Equal(t, `; sign in with "mcpward login notes"`, Hint("notes", oauth.ReasonSignInRequired))
	assert.Contains(t, Hint("notes", oauth.ReasonStepUpRequired), `sign in again with "mcpward login notes"`)
	assert.Empty(t, Hint("notes", "network_error"))
}

// TestWriteDiscovery: every step on one line with its hint under it, what
// to do after a failure, and nothing raw from a server reaches the
// terminal.
func TestWriteDiscovery(t *testing.T) {
	var b strings.Builder
	WriteDiscovery(&b, "notes\x1b[2J", &oauth.Report{
		Server: "notes", Resource: "https://notes.example.com/mcp",
		Steps: []oauth.Step{
			{Check: oauth.CheckResourceMetadata, URL: "https://notes.example.com/.well-known/oauth-protected-resource/mcp", Status: 404, Outcome: oauth.OutcomeNotFound},
			{Check: oauth.CheckResourceMetadata, URL: "https://notes.example.com/.well-known/oauth-protected-resource", Status: 404, Outcome: oauth.OutcomeFailed,
				Reason: oauth.ReasonResourceMetadataUnavailable, Hint: "no location\x07 answered"},
		},
		Reason: oauth.ReasonResourceMetadataUnavailable,
	})
	out := b.String()
	assert.Contains(t, out, " 1. resource_metadata    https://notes.example.com/.well-known/oauth-protected-resource/mcp (404): not_found\n")
	assert.Contains(t, out, "(404): failed resource_metadata_unavailable\n")
	assert.Contains(t, out, "discovery failed (resource_metadata_unavailable): the server publishes no protected-resource metadata")
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\x07")
	b.Reset()
	WriteDiscovery(&b, "notes", nil)
	assert.Empty(t, b.String())
}
