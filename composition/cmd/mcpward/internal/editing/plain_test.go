package editing

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/core/definition"
)

// TestLiteralSecretJudgesValues: under a credential-shaped name, a value
// that is plainly no credential is not refused (#25 item 9); one that is,
// or that core/secret's shapes flag, still is.
func TestLiteralSecretJudgesValues(t *testing.T) {
	plain := []string{"https://auth.example.com/oauth/token", "12", "3.5", "true", "/run/secrets/token", "./token.txt", "~/.config/t", "X-Api-Key", "Authorization"}
	secretValues := []string{"s3cr3t-value", "123456789012", "https://user:pw@h.example.com/", "https://h.example.com/?token=abc123",
		"ghp_0123456789abcdefghijABCDEFGHIJ012345", "Correct-Horse-Battery", "a b"}
	for _, v := range plain {
		d := &definition.Definition{Name: "s", Env: map[string]string{"API_TOKEN": v}, Args: []string{"--token", v}}
		assert.Empty(t, FindLiteralSecrets(d), "%q is plainly no credential", v)
	}
	for _, v := range secretValues {
		d := &definition.Definition{Name: "s", Env: map[string]string{"API_TOKEN": v}, Args: []string{"--token", v}}
		assert.Len(t, FindLiteralSecrets(d), 2, "%q stays a literal credential", v)
	}
	d := &definition.Definition{Name: "s", Args: []string{"--token-file", "/run/secrets/t"}}
	assert.Empty(t, FindLiteralSecrets(d), "--token-file PATH is a path")
	d = &definition.Definition{Name: "s", Headers: map[string]string{"X-Api-Key": "12"}}
	assert.Len(t, FindLiteralSecrets(d), 1, "a header's value under a credential header is judged by its name only")
}
