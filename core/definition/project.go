package definition

import (
	"strings"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/ports"
)

// Projection is a definition as it may be shown: printed, logged, audited,
// returned from a CLI as JSON. It never holds a secret it knows of, and it
// holds no env or header VALUE at all, only keys, so "configured but
// redacted" (key listed) and "not configured" (key absent) stay
// distinguishable while a value of no recognisable shape cannot leak.
//
// JSON shape (stable; fields marked "omitted" are left out when empty):
//
//	name                      server id
//	tier, origin              provenance
//	transport                 "stdio" | "http" | "sse" | "ws"
//	command, args, cwd, url   as run / connected to, secrets masked (omitted);
//	                          an IDN host shown both ways: its ASCII form in
//	                          the URL, the Unicode form after it in
//	                          parentheses
//	endpoint                  the activation endpoint (see Endpoint)
//	envKeys, headerKeys       sorted keys, always an array
//	headersHelper             the helper argv, literal shapes masked (omitted)
//	oauth                     {clientId, scopes, callbackPort, metadataUrl, clientMetadataUrl} (omitted)
//	requiresTrustedWorkspace  bool
//	refusal                   the refusal word (omitted)
//	includeTools, excludeTools  the tool filters, literal shapes masked
//	                          (omitted when absent; [] is kept)
//	timeout                   the definition's "timeout" in milliseconds
//	                          (omitted when absent)
//
// Masking: a secret stretch (one a credential-shaped variable produced, or
// one a template produced where a credential goes; see Stretch.Secret) is
// shown as secret.RedactedVar(VAR); an argument after a credential-shaped
// flag (--api-key VALUE) is shown as markers only; and then every literal
// credential shape is masked by secret.MaskLiterals (display only, a
// guess). The header helper argv is masked the same way: an element after
// a credential-shaped flag is secret.Redacted.
type Projection struct {
	Name                     string           `json:"name"`
	Tier                     ports.Tier       `json:"tier"`
	Origin                   string           `json:"origin"`
	Transport                Kind             `json:"transport"`
	Command                  string           `json:"command,omitempty"`
	Args                     []string         `json:"args,omitempty"`
	Cwd                      string           `json:"cwd,omitempty"`
	URL                      string           `json:"url,omitempty"`
	Endpoint                 string           `json:"endpoint"`
	EnvKeys                  []string         `json:"envKeys"`
	HeaderKeys               []string         `json:"headerKeys"`
	HeadersHelper            []string         `json:"headersHelper,omitempty"`
	OAuth                    *ProjectionOAuth `json:"oauth,omitempty"`
	RequiresTrustedWorkspace bool             `json:"requiresTrustedWorkspace"`
	Refusal                  string           `json:"refusal,omitempty"`
	// IncludeTools and ExcludeTools are the definition's tool filters, nil
	// when absent; a non-nil empty IncludeTools (no tool at all) encodes
	// as [].
	IncludeTools *[]string `json:"includeTools,omitempty"`
	ExcludeTools *[]string `json:"excludeTools,omitempty"`
	// Timeout is the definition's "timeout" in milliseconds (the unit of
	// the format), 0 when absent.
	Timeout int64 `json:"timeout,omitempty"`
}

// ProjectionOAuth is the shown part of a definition's OAuth configuration.
// A definition holds no OAuth secret (a client secret makes it refused and
// is not kept); the strings are still passed through secret.MaskLiterals.
type ProjectionOAuth struct {
	ClientID     string   `json:"clientId,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	CallbackPort int      `json:"callbackPort,omitempty"`
	MetadataURL  string   `json:"metadataUrl,omitempty"`
	// ClientMetadataURL is the client metadata document URL, masked.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
}

// Project returns the projection of a materialized definition: command,
// args, cwd and URL as expanded, with each secret stretch replaced by
// secret.RedactedVar(VAR) and literal credential shapes masked; env and
// header keys only. Project(nil) is the zero Projection with empty key
// lists.
func Project(m *Materialized) Projection {
	if m == nil || m.Def == nil {
		return Projection{EnvKeys: []string{}, HeaderKeys: []string{}}
	}
	p := projCommon(m.Def)
	p.Command = m.Command.Display()
	if len(m.Args) > 0 {
		p.Args = make([]string, len(m.Args))
		for i, a := range m.Args {
			p.Args[i] = a.Display()
		}
	}
	p.Cwd = m.Cwd.Display()
	p.URL = egress.DisplayURL(m.URL.Display())
	// Endpoint(m), without displaying the same value twice.
	if m.Def.Kind == KindStdio {
		p.Endpoint = p.Command
	} else {
		p.Endpoint = p.URL
	}
	return p
}

// ProjectDefinition returns the projection of a definition that could not
// be (or was not) materialized: templates are shown as written, except
// that the default of a secret template (a credential-shaped variable, or
// a template where a credential goes; see Stretch.Secret) is shown as
// secret.Redacted (${TOKEN:-<redacted>}); an argument after a
// credential-shaped flag shows its templates only, its literal text as
// secret.Redacted; and literal credential shapes are masked. Its Endpoint
// is computed the same way from the unexpanded command or URL.
// ProjectDefinition(nil) is the zero Projection with empty key lists.
func ProjectDefinition(d *Definition) Projection {
	if d == nil {
		return Projection{EnvKeys: []string{}, HeaderKeys: []string{}}
	}
	p := projCommon(d)
	p.Command = projTemplate(d.Command)
	if len(d.Args) > 0 {
		p.Args = make([]string, len(d.Args))
		for i, a := range d.Args {
			if i > 0 && secret.IsCredentialFlag(d.Args[i-1]) {
				p.Args[i] = projFlagValue(a)
			} else {
				p.Args[i] = projTemplate(a)
			}
		}
	}
	p.Cwd = projTemplate(d.Cwd)
	p.URL = egress.DisplayURL(projTemplate(d.URL))
	if d.Kind == KindStdio {
		p.Endpoint = p.Command
	} else {
		p.Endpoint = p.URL
	}
	return p
}

// Endpoint returns m's activation endpoint, the security identity an
// approval is bound to (ports.Identity.Security): for a stdio definition
// its command (the program, without args), for every other transport its
// URL. It is readable, so an operator can tell servers apart: only secret
// stretches are replaced by secret.RedactedVar(VAR) and literal credential
// shapes masked (a userinfo password, a ?token= value). An
// internationalized host is shown both ways, ASCII form in place and the
// Unicode form after the URL (egress.DisplayURL), so a look-alike host
// never passes for the one it imitates. Being masked, it is not the
// fingerprint: activation binds both. Endpoint(nil) is "".
func Endpoint(m *Materialized) string {
	if m == nil || m.Def == nil {
		return ""
	}
	if m.Def.Kind == KindStdio {
		return m.Command.Display()
	}
	return egress.DisplayURL(m.URL.Display())
}

// projCommon fills the fields Project and ProjectDefinition share.
func projCommon(d *Definition) Projection {
	p := Projection{
		Name:                     d.Name,
		Tier:                     d.Tier,
		Origin:                   d.Origin,
		Transport:                d.Kind,
		EnvKeys:                  matSortedKeys(d.Env),
		HeaderKeys:               matSortedKeys(d.Headers),
		RequiresTrustedWorkspace: d.RequiresTrustedWorkspace,
		Refusal:                  d.Refusal,
	}
	p.IncludeTools = projToolNames(d.IncludeTools)
	p.ExcludeTools = projToolNames(d.ExcludeTools)
	p.Timeout = d.Timeout.Milliseconds()
	if len(d.HeadersHelper) > 0 {
		p.HeadersHelper = make([]string, len(d.HeadersHelper))
		for i, a := range d.HeadersHelper {
			if i > 0 && a != "" && secret.IsCredentialFlag(d.HeadersHelper[i-1]) {
				p.HeadersHelper[i] = secret.Redacted
			} else {
				p.HeadersHelper[i] = secret.MaskLiterals(a)
			}
		}
	}
	if o := d.OAuth; o != nil {
		po := &ProjectionOAuth{
			ClientID:     secret.MaskLiterals(o.ClientID),
			CallbackPort: o.CallbackPort,
			MetadataURL:  secret.MaskLiterals(o.MetadataURL),

			ClientMetadataURL: secret.MaskLiterals(o.ClientMetadataURL),
		}
		if len(o.Scopes) > 0 {
			po.Scopes = make([]string, len(o.Scopes))
			for i, s := range o.Scopes {
				po.Scopes[i] = secret.MaskLiterals(s)
			}
		}
		p.OAuth = po
	}
	return p
}

// projTemplate shows a template string as written, with the default of
// every secret template (a credential-shaped variable, or a template where
// a credential goes) replaced by secret.Redacted, and then literal
// credential shapes masked. A malformed "${" is shown as written and the
// text after it is shown by the same rule, except that after "${NAME:-"
// with a credential-shaped NAME everything is redacted (the default never
// ended cleanly, so its extent is unknown).
func projTemplate(s string) string {
	var b strings.Builder
	for {
		parts, bad := matParse(s)
		_, which := matPositions(s, false)
		pos := matPosCursor(which)
		k := -1
		for _, p := range parts {
			if p.template {
				k++
			}
			switch {
			case !p.template:
				b.WriteString(p.text)
			case p.hasDefault && (pos.has(k) || secret.IsCredentialName(p.name)):
				b.WriteString("${")
				b.WriteString(p.name)
				b.WriteString(":-")
				b.WriteString(secret.Redacted)
				b.WriteString("}")
			default:
				b.WriteString(p.raw)
			}
		}
		if bad < 0 {
			break
		}
		rest := s[bad:]
		if n := projSecretDefaultOpen(rest); n > 0 {
			b.WriteString(rest[:n])
			b.WriteString(secret.Redacted)
			break
		}
		b.WriteString("${")
		s = rest[2:]
	}
	return secret.MaskLiterals(b.String())
}

// projFlagValue shows an argument that follows a credential-shaped flag
// in a definition shown unexpanded: each template as written with its
// default, if any, as secret.Redacted, and each run of literal text (and
// whatever follows a malformed "${") as secret.Redacted.
func projFlagValue(s string) string {
	var b strings.Builder
	parts, bad := matParse(s)
	lastLiteral := false
	for _, p := range parts {
		lastLiteral = !p.template
		switch {
		case !p.template:
			b.WriteString(secret.Redacted)
		case p.hasDefault:
			b.WriteString("${")
			b.WriteString(p.name)
			b.WriteString(":-")
			b.WriteString(secret.Redacted)
			b.WriteString("}")
		default:
			b.WriteString(p.raw)
		}
	}
	if bad >= 0 && !lastLiteral {
		b.WriteString(secret.Redacted)
	}
	return b.String()
}

// projSecretDefaultOpen returns the length of "${NAME:-" at the start of
// rest when NAME is credential-shaped, and 0 otherwise.
func projSecretDefaultOpen(rest string) int {
	i := 2
	for i < len(rest) && matNameByte(rest[i]) {
		i++
	}
	name := rest[2:i]
	if name == "" || !matNameStart(name[0]) || !strings.HasPrefix(rest[i:], ":-") || !secret.IsCredentialName(name) {
		return 0
	}
	return i + 2
}

// projToolNames returns a tool filter for display: nil for nil, else a
// new list with literal credential shapes masked.
func projToolNames(names []string) *[]string {
	if names == nil {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = secret.MaskLiterals(n)
	}
	return &out
}
