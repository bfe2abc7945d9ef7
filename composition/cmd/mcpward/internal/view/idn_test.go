package view

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
)

// TestHostBothWays: a look-alike host is shown both ways in errors and in
// a failed connection's detail, doctor's two places for a host (issue 22,
// attack 9).
func TestHostBothWays(t *testing.T) {
	assert.Equal(t, "https://xn--pple-43d.com:443 (аpple.com)", HostBothWays("https://аpple.com:443"))
	assert.Equal(t, "xn--pple-43d.com:443 (аpple.com)", HostBothWays("аpple.com:443"))
	assert.Equal(t, "xn--pple-43d.com:443 (аpple.com)", HostBothWays("xn--pple-43d.com:443"))
	assert.Equal(t, "apple.com:443", HostBothWays("apple.com:443"))
	assert.Equal(t, "", HostBothWays(""))

	err := &refusal.Error{Class: refusal.Transient, Reason: "dial_failed", Server: "s", Origin: "https://аpple.com:443"}
	assert.Equal(t, `mcpward: transient: dial_failed (server "s", origin https://xn--pple-43d.com:443 (аpple.com))`, ErrorText(err))
	assert.Equal(t, "xn--pple-43d.com:443 (аpple.com) (refused)", FailureText(composition.FailureDetail{Endpoint: "аpple.com:443", Cause: "refused"}))
}

// TestExplainSecretTargets: the refusals of a secret deciding what runs say
// what to write instead.
func TestExplainSecretTargets(t *testing.T) {
	for _, reason := range []string{definition.RefusalSecretInCommand, definition.RefusalSecretInCwd, definition.RefusalSecretInURL} {
		why, fix := Explain(composition.ServerEvaluation{Name: "s", State: composition.StateRefused, Reason: reason, Origin: "/w/.mcp.json"})
		assert.Contains(t, why, "credential-shaped variable", reason)
		assert.Contains(t, fix, "write ", reason)
		assert.Contains(t, fix, "/w/.mcp.json", reason)
	}
}

// TestExplainEgressIDN: doctor's fix names a look-alike host in ASCII (the
// form the egress command takes) and says which host that is.
func TestExplainEgressIDN(t *testing.T) {
	r := composition.ServerEvaluation{Name: "s", State: composition.StateRefused, Reason: egress.ReasonHTTPNotLoopback, Origin: "/w/.mcp.json",
		Projection: &definition.Projection{URL: "http://xn--pple-43d.com/mcp (аpple.com)"}}
	_, fix := Explain(r)
	assert.Contains(t, fix, `"mcpward egress allow --http xn--pple-43d.com" (xn--pple-43d.com is аpple.com)`)
	r.Projection.URL = "http://apple.com/mcp"
	_, fix = Explain(r)
	assert.NotContains(t, fix, "apple.com is")
}
