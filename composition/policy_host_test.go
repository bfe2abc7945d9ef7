package composition

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// TestManagedPolicyJudgesWhatRuns: a managed deny list refuses a server
// whose template expands to the denied command or URL, in every tier; a
// definition whose expansion is unknown is refused when a deny entry could
// match it; and the verdict is taken again on the values about to run
// (issue 22, attack 13).
func TestManagedPolicyJudgesWhatRuns(t *testing.T) {
	vars := map[string]string{}
	r := newRig(t, Config{Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	managed := definition.Source{Tier: ports.TierManaged, Origin: "/etc/managed.json", Data: []byte(`{
		"deniedMcpServers":[{"serverCommand":["python3","-c","evil()"]},{"serverUrl":"https://evil.example/*"}]}`)}
	srcs := func(tier ports.Tier, doc string) []definition.Source {
		return []definition.Source{managed, {Tier: tier, Origin: "/w/.mcp.json", Data: []byte(doc)}}
	}
	state := func(tier ports.Tier, doc string) string {
		res, ok := r.host.Evaluate(context.Background(), srcs(tier, doc)).Server("s")
		require.True(t, ok)
		return string(res.State) + " " + res.Reason
	}
	for _, tier := range []ports.Tier{ports.TierUser, ports.TierProject} {
		assert.Equal(t, "refused policy_denied", state(tier, `{"mcpServers":{"s":{"command":"python3","args":["-c","${X:-evil()}"]}}}`), tier)
		assert.Equal(t, "refused policy_denied", state(tier, `{"mcpServers":{"s":{"type":"http","url":"https://${H:-evil.example}/mcp"}}}`), tier)
		assert.Equal(t, "refused policy_denied", state(tier, `{"mcpServers":{"s":{"command":"python3","args":["-c","${NOT_SET}"]}}}`), tier)
	}
	assert.Equal(t, "unresolved unset_variable", state(ports.TierUser, `{"mcpServers":{"s":{"command":"node","args":["${NOT_SET}"]}}}`))

	// Approved and connectable while the variable says otherwise; refused
	// at connect once it expands to the denied command.
	doc := `{"mcpServers":{"s":{"command":"python3","args":["-c","${RUN_TOKEN:-evil()}"]}}}`
	vars["RUN_TOKEN"] = "ok()"
	assert.Equal(t, "allowed host_trusted_tier", state(ports.TierUser, doc))
	res := r.host.resolve(srcs(ports.TierUser, doc))
	ev, _ := r.host.Evaluate(context.Background(), srcs(ports.TierUser, doc)).Server("s")
	_, _, ok := r.host.connectTarget(res, "s", ev.Fingerprint)
	assert.True(t, ok)
	vars["RUN_TOKEN"] = "evil()" // a secret: the fingerprint does not see it
	_, _, ok = r.host.connectTarget(res, "s", ev.Fingerprint)
	assert.False(t, ok, "the policy is judged again on what is about to run")
	assert.Equal(t, "refused policy_denied", state(ports.TierUser, doc))
}

// TestSecretTargetRefusedByName: a credential-shaped variable in the
// command, the cwd or the URL's host is refused by name, and never
// approvable (issue 22, attack 4).
func TestSecretTargetRefusedByName(t *testing.T) {
	r := newRig(t, Config{Lookup: func(string) (string, bool) { return "v", true }})
	for doc, want := range map[string]string{
		`{"mcpServers":{"s":{"command":"${MY_TOKEN}"}}}`:                        definition.RefusalSecretInCommand,
		`{"mcpServers":{"s":{"command":"srv","cwd":"${DEPLOY_TOKEN}"}}}`:        definition.RefusalSecretInCwd,
		`{"mcpServers":{"s":{"type":"http","url":"https://${API_TOKEN}/mcp"}}}`: definition.RefusalSecretInURL,
	} {
		srcs := []definition.Source{{Tier: ports.TierProject, Origin: "/w/.mcp.json", Data: []byte(doc)}}
		res, ok := r.host.Evaluate(context.Background(), srcs).Server("s")
		require.True(t, ok)
		assert.Equal(t, StateRefused, res.State, doc)
		assert.Equal(t, want, res.Reason, doc)
		_, err := r.host.Approve(context.Background(), srcs, "s")
		assert.Equal(t, ReasonNotApprovable, refusal.ReasonOf(err), doc)
	}
}
