package importcmd

import (
	"sort"
	"strings"

	"github.com/mcpward/mcpward/adapters/hostconfig"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/editing"
	"github.com/mcpward/mcpward/core/definition"
)

// ReasonLiteralCredential: a server headed for the shared project file
// holds a literal credential-shaped value (an env value or header under a
// credential-shaped name, an argument or URL part of a credential's
// shape); it is not imported there. Write the value as ${VAR}, or import
// into the local or user scope.
const ReasonLiteralCredential = "literal_credential_in_project_file"

// CopiedLiterals names, for one server imported into a private scope
// (local or user), the fields where a literal credential was copied as
// the source wrote it. Neither field holds a value.
type CopiedLiterals struct {
	// Server is the server's name in the target.
	Server string `json:"server"`
	// Fields are editing.LiteralSecret's fields ("env.API_KEY",
	// "headers.Authorization", "args[2]", "url"), each with the ${VAR}
	// form that would keep the value out of the file.
	Fields []editing.LiteralSecret `json:"fields"`
}

// literalSecrets returns the literal credentials of every server of data
// (our format) that holds one, by server name, under the one rule add
// applies (editing.FindLiteralSecrets: values judged, not only names).
func literalSecrets(data []byte) map[string][]editing.LiteralSecret {
	out := map[string][]editing.LiteralSecret{}
	doc := definition.Decode(definition.Source{Data: data})
	for _, e := range doc.Entries {
		if e.Def == nil {
			continue
		}
		if found := editing.FindLiteralSecrets(e.Def); len(found) > 0 {
			out[e.Name] = found
		}
	}
	return out
}

// literalCredentials returns the finding refusing each server of found
// for the shared project file, sorted by server; its Field is the first
// field holding a literal credential.
func literalCredentials(found map[string][]editing.LiteralSecret) []hostconfig.Finding {
	out := make([]hostconfig.Finding, 0, len(found))
	for name, fs := range found {
		out = append(out, hostconfig.Finding{Server: name, Kind: hostconfig.FindingRefused, Field: fs[0].Field, Reason: ReasonLiteralCredential})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}

// copiedLiterals returns, for the servers of written that hold a literal
// credential, what was copied, sorted by server.
func copiedLiterals(found map[string][]editing.LiteralSecret, written ...[]string) []CopiedLiterals {
	out := []CopiedLiterals{}
	for _, names := range written {
		for _, n := range names {
			if fs := found[n]; len(fs) > 0 {
				out = append(out, CopiedLiterals{Server: n, Fields: fs})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Compare(out[i].Server, out[j].Server) < 0 })
	return out
}
