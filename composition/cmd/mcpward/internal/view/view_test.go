package view

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
)

// TestExplainAuthRefusals checks that each authentication refusal gets its
// own explanation and fix, not the generic "correct the entry".
func TestExplainAuthRefusals(t *testing.T) {
	generic := func(r composition.Result) string { return "correct the entry in " + r.Origin }
	for _, reason := range []string{
		composition.ReasonOAuthSignInUnavailable,
		composition.ReasonHeaderHelperNotAllowed,
		oauth.ReasonURLInvalid,
		httptransport.ReasonHelperArgvInvalid,
	} {
		t.Run(reason, func(t *testing.T) {
			r := composition.Result{Name: "svc", State: composition.StateRefused, Reason: reason, Origin: "/w/.mcp.json"}
			why, fix := Explain(r)
			assert.NotContains(t, why, "("+reason+")", "a specific explanation, not the generic one")
			assert.NotEqual(t, generic(r), fix)
			assert.NotEmpty(t, fix)
		})
	}
}

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0.0s", 299 * time.Millisecond: "0.3s", 30*time.Second + 120*time.Millisecond: "30.1s",
		65 * time.Second: "1m5s", 10 * time.Minute: "10m0s",
	} {
		assert.Equal(t, want, Elapsed(d), d.String())
	}
}
