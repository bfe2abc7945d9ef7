package refusal_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassString(t *testing.T) {
	cases := []struct {
		class refusal.Class
		want  string
	}{
		{refusal.Internal, "internal"},
		{refusal.Transient, "transient"},
		{refusal.AuthRequired, "auth_required"},
		{refusal.AuthRefused, "auth_refused"},
		{refusal.Refused, "refused"},
		{refusal.Unsupported, "unsupported"},
		{refusal.Protocol, "protocol"},
		{refusal.Config, "config"},
		{refusal.None, "none"},
		{refusal.Class(-1), "internal"},
		{refusal.Class(99), "internal"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			assert.Equal(t, c.want, c.class.String())
			b, err := c.class.MarshalText()
			require.NoError(t, err)
			assert.Equal(t, c.want, string(b))
		})
	}
}

func TestErrorRendering(t *testing.T) {
	cases := []struct {
		name string
		err  *refusal.Error
		want string
	}{
		{"bare", &refusal.Error{Class: refusal.Refused, Reason: "redirect_refused"}, "mcpward: refused: redirect_refused"},
		{"no reason", &refusal.Error{}, "mcpward: internal: unspecified"},
		{"server", refusal.New(refusal.Config, "unset_variable", "github"), `mcpward: config: unset_variable (server "github")`},
		{"origin only", refusal.New(refusal.Transient, "connect_failed", "").WithOrigin("https://mcp.example.com:443"), "mcpward: transient: connect_failed (origin https://mcp.example.com:443)"},
		{"server and origin and detail", &refusal.Error{Class: refusal.AuthRefused, Reason: "credential_refused", Server: "s", Origin: "https://a:443", Detail: "after one retry"}, `mcpward: auth_refused: credential_refused (server "s", origin https://a:443): after one retry`},
		{"server id cannot forge lines", refusal.New(refusal.Config, "x", "a\nmcpward: fake\x7f\"q\\"), `mcpward: config: x (server "a?mcpward: fake?\"q\\")`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.err.Error())
		})
	}
}

func TestWithOriginCopies(t *testing.T) {
	base := refusal.New(refusal.Refused, "address_refused", "s")
	derived := base.WithOrigin("https://h:443")
	assert.Empty(t, base.Origin, "WithOrigin must not modify its receiver")
	assert.Equal(t, "https://h:443", derived.Origin)
	assert.Equal(t, base.Reason, derived.Reason)
}

func TestIsMatchesClassAndReason(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", refusal.New(refusal.Refused, "redirect_refused", "srv").WithOrigin("https://a:443"))
	assert.ErrorIs(t, err, refusal.New(refusal.Refused, "redirect_refused", ""))
	assert.NotErrorIs(t, err, refusal.New(refusal.Refused, "scheme_refused", ""))
	assert.NotErrorIs(t, err, refusal.New(refusal.Config, "redirect_refused", ""))
	assert.NotErrorIs(t, err, errors.New("redirect_refused"))
}

func TestClassOfAndReasonOf(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		class  refusal.Class
		reason string
	}{
		{"nil", nil, refusal.Internal, ""},
		{"plain error", errors.New("boom"), refusal.Internal, ""},
		{"direct", refusal.New(refusal.Transient, "timeout", "s"), refusal.Transient, "timeout"},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", refusal.New(refusal.AuthRequired, "sign_in_needed", "s"))), refusal.AuthRequired, "sign_in_needed"},
		{"joined, first wins", errors.Join(errors.New("x"), refusal.New(refusal.Protocol, "bad_version", "")), refusal.Protocol, "bad_version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.class, refusal.ClassOf(c.err))
			assert.Equal(t, c.reason, refusal.ReasonOf(c.err))
		})
	}
}
