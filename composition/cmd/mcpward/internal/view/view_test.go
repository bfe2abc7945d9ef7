package view

import (
	"strings"
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
	generic := func(r composition.ServerEvaluation) string { return "correct the entry in " + r.Origin }
	for _, reason := range []string{
		composition.ReasonOAuthSignInUnavailable,
		composition.ReasonHeaderHelperNotAllowed,
		oauth.ReasonURLInvalid,
		httptransport.ReasonHelperArgvInvalid,
	} {
		t.Run(reason, func(t *testing.T) {
			r := composition.ServerEvaluation{Name: "svc", State: composition.StateRefused, Reason: reason, Origin: "/w/.mcp.json"}
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

func TestFailureText(t *testing.T) {
	tests := []struct {
		name string
		d    composition.FailureDetail
		want string
	}{
		{"none", composition.FailureDetail{}, ""},
		{"exit and program", composition.FailureDetail{Exit: "exit status 3", Program: "npx"}, "exit status 3 — program npx"},
		{"program only", composition.FailureDetail{Program: "/usr/bin/missing"}, "program /usr/bin/missing"},
		{"endpoint and cause", composition.FailureDetail{Endpoint: "127.0.0.1:9", Cause: composition.CauseRefused}, "127.0.0.1:9 (refused)"},
		{"endpoint only", composition.FailureDetail{Endpoint: "example.com:443"}, "example.com:443"},
		{"escaped", composition.FailureDetail{Program: "evil\x1b[2J"}, `program evil\x1b[2J`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, FailureText(tt.d))
		})
	}
}

func TestWriteServerStderr(t *testing.T) {
	tests := []struct{ name, tail, want string }{
		{"empty", "", "--- stderr of s (the server's own output, secrets masked) ---\n  (nothing)\n--- end of the stderr of s ---\n"},
		{"lines escaped and indented", "fatal: x\x1b]0;t\x07\nmcpward: fake\r\n", "--- stderr of s (the server's own output, secrets masked) ---\n  fatal: x\\x1b]0;t\\x07\n  mcpward: fake\\r\n--- end of the stderr of s ---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			WriteServerStderr(&b, "s", tt.tail)
			assert.Equal(t, tt.want, b.String())
		})
	}
}
