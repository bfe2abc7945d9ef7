package importcmd

import (
	"regexp"
	"slices"
	"strings"

	"github.com/mcpward/mcpward/adapters/hostconfig"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/secret"
)

// ReasonLiteralCredential: a server headed for the shared project file
// holds a literal credential-shaped value (an env value or header under a
// credential-shaped name, an argument or URL part of a credential's
// shape); it is not imported there. Write the value as ${VAR}, or import
// into the local or user scope.
const ReasonLiteralCredential = "literal_credential_in_project_file"

// templateRE matches one ${…} template of our format.
var templateRE = regexp.MustCompile(`\$\{[^}]*\}`)

// schemeRE matches an authorization scheme word before a credential.
var schemeRE = regexp.MustCompile(`^(?i:bearer|basic|token|bot)\s+`)

// literalUnder reports whether value, kept under a credential-shaped name,
// holds literal text besides its templates and a scheme word ("Bearer
// ${TOKEN}" does not; "Bearer abc" and "abc${X}" do).
func literalUnder(value string) bool {
	rest := strings.TrimSpace(schemeRE.ReplaceAllString(strings.TrimSpace(value), ""))
	return strings.TrimSpace(templateRE.ReplaceAllString(rest, "")) != ""
}

// literalCredentials returns, for every server of data (our format) that
// holds a literal credential, the finding refusing it, sorted by server.
func literalCredentials(data []byte) []hostconfig.Finding {
	var out []hostconfig.Finding
	doc := definition.Decode(definition.Source{Data: data})
	for _, e := range doc.Entries {
		if e.Def == nil {
			continue
		}
		if field := literalField(e.Def); field != "" {
			out = append(out, hostconfig.Finding{Server: e.Name, Kind: hostconfig.FindingRefused, Field: field, Reason: ReasonLiteralCredential})
		}
	}
	return out
}

// literalField names the first field of d holding a literal credential,
// "" when none does.
func literalField(d *definition.Definition) string {
	for _, k := range sortedKeys(d.Env) {
		if secret.IsCredentialName(k) && literalUnder(d.Env[k]) {
			return "env"
		}
	}
	for _, k := range sortedKeys(d.Headers) {
		if secret.IsCredentialHeader(k) && literalUnder(d.Headers[k]) {
			return "headers"
		}
	}
	for i, a := range d.Args {
		if secret.MaskLiterals(a) != a {
			return "args"
		}
		if i > 0 && secret.IsCredentialFlag(d.Args[i-1]) && literalUnder(a) {
			return "args"
		}
	}
	if d.URL != "" && secret.MaskLiterals(d.URL) != d.URL {
		return "url"
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
